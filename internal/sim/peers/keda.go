package peers

import (
	"context"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

// KEDA models KEDA's aws-sqs-queue scaler feeding the Kubernetes Horizontal
// Pod Autoscaler, with their documented defaults.
//
// KEDA (https://keda.sh/docs/latest/scalers/aws-sqs/): the metric is
// ApproximateNumberOfMessages plus ApproximateNumberOfMessagesNotVisible
// (scaleOnInFlight defaults to true), exposed as an AverageValue external
// metric with target `queueLength` messages per replica.
//
// HPA (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/):
// every sync period (15 s) desired = ceil(current × metric/target), which for
// an AverageValue target is ceil(total/queueLength); no change while the
// ratio is within the tolerance 0.1 of 1. Default behaviour: scale-down is
// stabilised over 300 s (the highest recommendation in the window wins);
// scale-up is immediate but limited per 15 s to the larger of +100 % and +4
// pods.
//
// The queue is read every pollingInterval (KEDA's ScaledObject default,
// 30 s; https://keda.sh/docs/latest/reference/scaledobject-spec/), and the
// HPA acts on the value read last, as with the trigger's useCachedMetrics:
// a change of depth reaches the HPA up to 30 s + 15 s late.
type KEDA struct {
	w           World
	QueueLength float64 // target messages per replica
	Polling     time.Duration
	Sync        time.Duration
	Tolerance   float64
	DownWindow  time.Duration
	UpPods      int     // pods added per UpPeriod at most (policy Pods)
	UpPercent   float64 // percent added per UpPeriod at most (policy Percent)
	UpPeriod    time.Duration

	last   time.Time
	polled time.Time
	metric float64
	recs   []recommendation
	events []scaleEvent
}

type recommendation struct {
	at time.Time
	n  int
}

type scaleEvent struct {
	at     time.Time
	change int
}

// NewKEDA makes the KEDA/HPA peer for w with the parameters' polling and
// sync, and their queueLength or else latency ÷ service time × concurrency,
// the backlog one replica clears within the latency (the scaler's docs:
// "if one pod can handle 10 messages, set the queue length target to 10").
// The service time is the one the settings give: a user sets queueLength
// from what they believe a message takes, as the checker's settings do.
func NewKEDA(w World, s Settings, pp Params) *KEDA {
	ql := pp.KEDAQueueLength
	if ql <= 0 {
		ql = s.backlogPerWorker()
	}
	return &KEDA{
		w:           w,
		QueueLength: ql,
		Polling:     pp.KEDAPolling,
		Sync:        pp.HPASync,
		Tolerance:   0.1,
		DownWindow:  pp.HPADownWindow,
		UpPods:      4,
		UpPercent:   100,
		UpPeriod:    15 * time.Second,
	}
}

// Step runs one HPA sync when the sync period has passed.
func (k *KEDA) Step(ctx context.Context, now time.Time) error {
	if !k.last.IsZero() && now.Sub(k.last) < k.Sync {
		return nil
	}
	k.last = now
	o, err := observeOne(ctx, k.w, now)
	if err != nil {
		return err
	}
	if k.polled.IsZero() || now.Sub(k.polled) >= k.Polling {
		k.polled = now
		k.metric = float64(o.Sample.Visible + o.Sample.InFlight)
	}
	n := k.decide(k.metric, o.Fleet, now)
	if k.w.SetDesired(now, n) {
		k.events = append(k.events, scaleEvent{now, n - o.Fleet.Desired})
	}
	return nil
}

// decide is one HPA reconciliation: the raw recommendation, its
// stabilisation, and the rate limits.
func (k *KEDA) decide(metric float64, f model.Fleet, now time.Time) int {
	current := f.Desired                // the scale target's spec.replicas
	replicas := f.InService + f.Pending // pods that exist (status.replicas)
	rec := current
	if k.QueueLength > 0 {
		if replicas == 0 {
			rec = capacity.CeilWorkers(metric / k.QueueLength)
		} else if ratio := metric / (k.QueueLength * float64(replicas)); math.Abs(ratio-1) > k.Tolerance {
			rec = capacity.CeilWorkers(metric / k.QueueLength)
		} else {
			rec = replicas
		}
	}
	rec = min(max(rec, f.Min), f.Max)

	// The HPA seeds a new target's recommendations with its current
	// replica count, so the first scale-down waits out the window too.
	if k.recs == nil {
		k.recs = []recommendation{{now, current}}
	}

	// Stabilisation: a scale-down goes only as low as the highest
	// recommendation within the window; scale-up has no window.
	k.recs = append(k.recs, recommendation{now, rec})
	cut := 0
	for cut < len(k.recs) && now.Sub(k.recs[cut].at) > k.DownWindow {
		cut++
	}
	k.recs = k.recs[cut:]
	down := rec
	for _, r := range k.recs {
		down = max(down, r.n)
	}
	out := current
	if rec > out {
		out = rec
	}
	if out > down {
		out = down
	}

	// Scale-up limit: over the last period, at most the larger of
	// +UpPercent % and +UpPods of the replicas at the period's start.
	if out > current {
		added := 0
		ecut := 0
		for ecut < len(k.events) && now.Sub(k.events[ecut].at) >= k.UpPeriod {
			ecut++
		}
		k.events = k.events[ecut:]
		for _, e := range k.events {
			added += e.change
		}
		base := current - added
		limit := max(base+k.UpPods, capacity.CeilWorkers(float64(base)*(1+k.UpPercent/100)))
		out = min(out, limit)
	}
	return min(max(out, f.Min), f.Max)
}
