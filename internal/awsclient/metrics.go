package awsclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
)

// OutcomeSuccess is the outcome label of a call that returned no error;
// failed calls carry their error class (see Classify).
const OutcomeSuccess = "success"

// requestMetrics counts and times every SDK call, retries included: one
// observation per call as the caller sees it.
type requestMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newRequestMetrics(reg prometheus.Registerer) (*requestMetrics, error) {
	m := &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_aws_requests_total",
			Help: "AWS API calls made, by service, operation and outcome (success or the error class).",
		}, []string{"service", "operation", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "checker_aws_request_duration_seconds",
			Help:    "Duration of AWS API calls, retries included, by service and operation.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"service", "operation"}),
	}
	var err error
	if m.requests, err = register(reg, m.requests); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// the same description, so that several factories can share one registry.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, fmt.Errorf("register AWS request metrics: %w", err)
	}
	return c, nil
}

// addTo puts the recording middleware at the very start of an operation's
// stack, so that it sees the whole call: retries, backoff, signing and
// decoding included. The SDK builds a stack for every call; the middleware
// itself is made once.
func (m *requestMetrics) addTo(stack *middleware.Stack) error {
	return stack.Initialize.Add((*recorder)(m), middleware.Before)
}

// recorder is the request metrics as an initialize middleware.
type recorder requestMetrics

func (*recorder) ID() string { return "checker/request-metrics" }

func (r *recorder) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error,
) {
	start := time.Now()
	out, md, err := next.HandleInitialize(ctx, in)
	(*requestMetrics)(r).observe(serviceLabel(awsmiddleware.GetServiceID(ctx)), awsmiddleware.GetOperationName(ctx), start, err)
	return out, md, err
}

// observe records one call, started at start, that returned err.
func (m *requestMetrics) observe(service, op string, start time.Time, err error) {
	outcome := OutcomeSuccess
	if err != nil {
		outcome = Classify(err)
	}
	m.requests.WithLabelValues(service, op, outcome).Inc()
	m.duration.WithLabelValues(service, op).Observe(time.Since(start).Seconds())
}

// callObserver records the calls of one operation, with the series of
// its successes and its durations looked up once, at the first call.
type callObserver struct {
	m           *requestMetrics
	service, op string
	once        sync.Once
	successOnce sync.Once
	success     prometheus.Counter
	duration    prometheus.Observer
}

func (m *requestMetrics) observer(service, op string) *callObserver {
	if m == nil {
		return nil
	}
	return &callObserver{m: m, service: service, op: op}
}

// observe records one call, started at start, that returned err; a nil
// observer records nothing.
func (o *callObserver) observe(start time.Time, err error) {
	if o == nil {
		return
	}
	o.once.Do(func() { o.duration = o.m.duration.WithLabelValues(o.service, o.op) })
	if err != nil {
		o.m.requests.WithLabelValues(o.service, o.op, Classify(err)).Inc()
	} else {
		o.successOnce.Do(func() { o.success = o.m.requests.WithLabelValues(o.service, o.op, OutcomeSuccess) })
		o.success.Inc()
	}
	o.duration.Observe(time.Since(start).Seconds())
}

// serviceLabel turns an SDK service ID ("SQS", "Auto Scaling") into a
// label value ("sqs", "auto_scaling"), without allocating for the services
// the checker calls.
func serviceLabel(id string) string {
	switch id {
	case "SQS":
		return "sqs"
	case "CloudWatch":
		return "cloudwatch"
	case "Auto Scaling":
		return "auto_scaling"
	case "ECS":
		return "ecs"
	}
	return strings.ReplaceAll(strings.ToLower(id), " ", "_")
}
