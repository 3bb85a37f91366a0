package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// metered records what the table reports each call consumed, and can
// strip the reports, as a table that returns none would.
type metered struct {
	dynamoAPI
	strip bool

	mu                       sync.Mutex
	scans, updates           int
	unreported               int // calls answered without a report
	readsSeen, writesSeen    float64
	askedTotal, askedAnother int
}

func (c *metered) asked(r types.ReturnConsumedCapacity) {
	if r == types.ReturnConsumedCapacityTotal {
		c.askedTotal++
	} else {
		c.askedAnother++
	}
}

func (c *metered) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := c.dynamoAPI.Scan(ctx, in, opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scans++
	c.asked(in.ReturnConsumedCapacity)
	if err == nil {
		if n, ok := reported(out.ConsumedCapacity); ok {
			c.readsSeen += n
		} else {
			c.unreported++
		}
		if c.strip {
			out.ConsumedCapacity = nil
		}
	}
	return out, err
}

func (c *metered) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := c.dynamoAPI.UpdateItem(ctx, in, opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates++
	c.asked(in.ReturnConsumedCapacity)
	if err == nil {
		if n, ok := reported(out.ConsumedCapacity); ok {
			c.writesSeen += n
		} else {
			c.unreported++
		}
		if c.strip {
			out.ConsumedCapacity = nil
		}
	}
	return out, err
}

func (c *metered) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scans, c.updates, c.unreported, c.readsSeen, c.writesSeen, c.askedTotal, c.askedAnother = 0, 0, 0, 0, 0, 0, 0
}

// A lone checker holding 3 leases makes, in a steady Sync, one scan and
// four updates (the heartbeat and three renewals). The clock then jumps
// past a minute, so the rate rests on that one Sync alone: its units over
// the interval (1 s) it stands for, × 60 a minute.
func TestRequestUnitsAreWhatTheTableReports(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(3)
	api := &metered{dynamoAPI: c}
	m := newManager(t, api, tbl, "a", groups, clk, nil)
	for range 3 {
		sync1(t, clk, m)
	}
	if got := len(permitted(m, groups)); got != 3 {
		t.Fatalf("holding %d leases, want 3", got)
	}
	api.reset()
	clk.Add(time.Minute)
	sync1(t, clk, m)

	if api.scans != 1 || api.updates != 4 {
		t.Fatalf("%d scans and %d updates in a steady sync, want 1 and 4", api.scans, api.updates)
	}
	if api.askedAnother != 0 || api.askedTotal != 5 {
		t.Fatalf("%d calls asked for ReturnConsumedCapacity TOTAL and %d did not, want 5 and 0", api.askedTotal, api.askedAnother)
	}
	if api.unreported != 0 {
		t.Fatalf("%d calls answered without ConsumedCapacity; the emulator reports it when asked", api.unreported)
	}
	reads, writes := m.RequestUnits()
	if want := api.readsSeen * 60; reads != want {
		t.Errorf("read units %v a minute, want %v (%v reported × 60)", reads, want, api.readsSeen)
	}
	if want := api.writesSeen * 60; writes != want {
		t.Errorf("write units %v a minute, want %v (%v reported × 60)", writes, want, api.writesSeen)
	}
	if reads <= 0 || writes <= 0 {
		t.Errorf("reads %v, writes %v a minute: the table reported nothing", reads, writes)
	}
}

// Without reports the units are estimated: the scan of a table of four
// small items (well under 4 KB) is 1 read unit, each update 1 write unit.
// One Sync of 1 scan and 4 updates over 1 s: 60 reads and 240 writes a
// minute.
func TestRequestUnitsEstimatedWithoutReports(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(3)
	api := &metered{dynamoAPI: c, strip: true}
	m := newManager(t, api, tbl, "a", groups, clk, nil)
	for range 3 {
		sync1(t, clk, m)
	}
	clk.Add(time.Minute)
	sync1(t, clk, m)
	if reads, writes := m.RequestUnits(); reads != 60 || writes != 240 {
		t.Fatalf("estimated %v read and %v write units a minute, want 60 and 240", reads, writes)
	}
}

func TestUnitEstimates(t *testing.T) {
	t.Parallel()
	// "key" (3) + "group/g01" (9) + "owner" (5) + "a" (1) + "counter" (7)
	// + "12" (2) = 27 bytes.
	small := map[string]types.AttributeValue{
		"key":     &types.AttributeValueMemberS{Value: "group/g01"},
		"owner":   &types.AttributeValueMemberS{Value: "a"},
		"counter": &types.AttributeValueMemberN{Value: "12"},
	}
	if n := itemBytes(small); n != 27 {
		t.Fatalf("item of %d bytes, want 27", n)
	}
	many := func(n int) []map[string]types.AttributeValue {
		out := make([]map[string]types.AttributeValue, n)
		for i := range out {
			out[i] = small
		}
		return out
	}
	for _, c := range []struct {
		name  string
		items int
		want  float64
	}{
		{"empty page: at least 1", 0, 1},
		{"one item", 1, 1},
		{"151 items: 4,077 bytes, one 4 KB unit", 151, 1},
		{"152 items: 4,104 bytes, two units", 152, 2},
		{"1,000 items: 27,000 bytes, ceil(6.59) = 7", 1000, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := scanReadUnits(many(c.items)); got != c.want {
				t.Fatalf("%d items: %v read units, want %v", c.items, got, c.want)
			}
		})
	}

	ccf := &types.ConditionalCheckFailedException{Message: aws.String("the conditional request failed")}
	for _, c := range []struct {
		name string
		rep  *types.ConsumedCapacity
		err  error
		want float64
	}{
		{"reported", &types.ConsumedCapacity{CapacityUnits: aws.Float64(2.5)}, nil, 2.5},
		{"not reported: 1 unit", nil, nil, 1},
		{"report without units: 1 unit", &types.ConsumedCapacity{}, nil, 1},
		{"condition failed: billed 1 unit", nil, ccf, 1},
		{"throttled: nothing", nil, errors.New("ProvisionedThroughputExceededException"), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var u units
			u.updated(c.rep, c.err)
			if u.writes != c.want {
				t.Fatalf("%v write units, want %v", u.writes, c.want)
			}
		})
	}
}

// The rate is per minute of Syncs: 3 writes every 5 s are 36 a minute.
func TestUnitsFold(t *testing.T) {
	t.Parallel()
	var u units
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 12 {
		for range 3 {
			u.updated(nil, nil)
		}
		u.scanned(&types.ConsumedCapacity{CapacityUnits: aws.Float64(1)}, nil)
		u.fold(t0.Add(time.Duration(i)*5*time.Second), 5*time.Second)
	}
	if r, w := u.perMinute[0], u.perMinute[1]; r != 12 || w != 36 {
		t.Fatalf("%v reads and %v writes a minute, want 12 and 36", r, w)
	}
}
