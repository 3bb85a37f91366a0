package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// --from-cloudwatch 2d replays two days of a group's NumberOfMessagesSent,
// planted in moto for a queue in each of two regions, and --save-trace
// writes them: each row is the minute's sum over the queues ÷ 60.
func TestSimulateFromCloudWatch(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	now := time.Now().UTC().Truncate(time.Minute)
	first := now.Add(-48*time.Hour - 10*time.Minute)
	type plantedQueue struct {
		region, name string
		value        func(m int64) (float64, bool) // by Unix minute
	}
	qs := []plantedQueue{
		{east, awstest.UniqueName(t, "cwa"), func(m int64) (float64, bool) { return float64(m%11 + 1), m%5 != 0 }},
		{west, awstest.UniqueName(t, "cwb"), func(m int64) (float64, bool) { return float64(m % 7), m%3 != 0 }},
	}
	for _, q := range qs {
		var data []cwtypes.MetricDatum
		for at := first; at.Before(now.Add(2 * time.Minute)); at = at.Add(time.Minute) {
			if v, ok := q.value(at.Unix() / 60); ok {
				data = append(data, cwtypes.MetricDatum{
					MetricName: aws.String("NumberOfMessagesSent"),
					Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(q.name)}},
					Timestamp:  aws.Time(at.Add(15 * time.Second)),
					Value:      aws.Float64(v),
				})
			}
		}
		for i := 0; i < len(data); i += 1000 {
			if _, err := f.CloudWatch(q.region).PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{
				Namespace: aws.String("AWS/SQS"), MetricData: data[i:min(i+1000, len(data))],
			}, func(o *cloudwatch.Options) { o.DisableRequestCompression = true }); err != nil {
				t.Fatalf("put metric data: %v", err)
			}
		}
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "checker.yaml")
	writeFile(t, cfgPath, fmt.Sprintf(`interval: 5s
aws: {region: %s, endpoint_url: %s, cloudwatch_protocol: json}
groups:
  - name: replayed
    queues:
      - {url: "https://sqs.%s.amazonaws.com/123456789012/%s"}
      - {url: "https://sqs.%s.amazonaws.com/123456789012/%s"}
    workers: {service_time: 100ms}
    target: {latency: 10s}
    fleet: {min: 1, max: 20, start_delay: 30s}
`, east, moto.URL, qs[0].region, qs[0].name, qs[1].region, qs[1].name))
	trace := filepath.Join(dir, "trace.csv")
	res := simJSON(t, "--config", cfgPath, "--group", "replayed", "--from-cloudwatch", "2d", "--save-trace", trace, "--policy", "fixed")
	// The command reads up to its own minute, which may be a later one than
	// the test's.
	done := time.Now().UTC().Truncate(time.Minute)

	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 2)
	i := strings.LastIndex(lines[0], " from ")
	if !strings.HasPrefix(lines[0], "# replayed:") || i < 0 {
		t.Fatalf("first line %q does not name the group and start", lines[0])
	}
	start, err := time.Parse(time.RFC3339, lines[0][i+len(" from "):])
	if err != nil {
		t.Fatal(err)
	}
	if start.Before(now.Add(-48*time.Hour-5*time.Minute)) || start.After(done.Add(-48*time.Hour)) {
		t.Fatalf("trace starts at %v, want 2 days before %v (or before %v, when the command ran)", start, now, done)
	}
	r := csv.NewReader(strings.NewReader(lines[1]))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows = rows[1:] // the header
	if len(rows) < 48*60-2 || len(rows) > 48*60 {
		t.Fatalf("%d rows, want about %d (one a minute for 2 days)", len(rows), 48*60)
	}
	bad := 0
	for k, row := range rows {
		ts, _ := strconv.ParseFloat(row[0], 64)
		rate, _ := strconv.ParseFloat(row[1], 64)
		m := start.Add(time.Duration(k)*time.Minute).Unix() / 60
		want := 0.0
		for _, q := range qs {
			if v, ok := q.value(m); ok {
				want += v
			}
		}
		if ts != float64(60*k) || math.Abs(rate-want/60) > 1e-9 {
			if bad < 5 {
				t.Errorf("row %d: %v,%v; want %d,%v", k, row[0], row[1], 60*k, want/60)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows differ", bad, len(rows))
	}
	// The run lasted the trace's length: the fixed fleet's starting size
	// paid for every minute of it.
	if len(res) != 1 || res[0].WorkerSeconds <= 0 || math.Mod(res[0].WorkerSeconds, 60) > 1e-6 {
		t.Errorf("results %+v", res)
	}
	// The saved trace replays offline with the same arrivals.
	off := simJSON(t, "--scenario", trace, "--policy", "fixed", "--service-time", "100ms", "--latency-target", "10s", "--min", "1", "--max", "20", "--interval", "5s", "--start-delay", "30s")
	if off[0].Messages != res[0].Messages || off[0].WorkerSeconds != res[0].WorkerSeconds {
		t.Errorf("offline replay: %d messages, %v worker-seconds; from CloudWatch %d, %v", off[0].Messages, off[0].WorkerSeconds, res[0].Messages, res[0].WorkerSeconds)
	}
}
