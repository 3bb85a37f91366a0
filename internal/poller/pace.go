package poller

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/model"
)

const (
	// paceShare is the part of the interval one round of a region's calls
	// is sized to take, leaving the rest for slow answers and retries.
	paceShare = 0.6
	// paceFloor is the fewest calls in flight per region (or the ceiling,
	// when that is lower).
	paceFloor = 4
	// paceFirst is the calls in flight a region's first round starts with,
	// before any latency is measured (or the ceiling, when that is lower).
	paceFirst = 16
	// latencyFall is the weight of a round's mean latency when it is below
	// the estimate; a round above it replaces the estimate at once.
	latencyFall = 0.5
)

// pace sizes one region's concurrency from the latency measured there.
type pace struct {
	floor, ceiling int
	// target is the time one round of calls is sized to take.
	target time.Duration
	// latency is the estimate of one call's latency; 0 until measured.
	latency time.Duration
	limit   int // calls in flight at most in the last round
}

// need is the concurrency that asks n queues within the target at the
// estimated latency.
func (p *pace) need(n int) int {
	if p.latency <= 0 || n == 0 {
		return 0
	}
	return int(math.Ceil(float64(n) * float64(p.latency) / float64(p.target)))
}

// size returns the concurrency a round of n calls starts with: what the
// estimated latency needs (paceFirst until a latency is measured), within
// the floor and the ceiling. The round adds workers as it goes when its
// own calls say it would not finish in time (pacedPool).
func (p *pace) size(n int) int {
	start := p.need(n)
	if p.latency <= 0 {
		start = paceFirst
	}
	p.limit = min(max(start, p.floor), p.ceiling)
	return p.limit
}

// observe folds a round's mean call latency into the estimate: up at once,
// down gradually.
func (p *pace) observe(mean time.Duration) {
	if mean <= 0 {
		return
	}
	if p.latency <= 0 || mean >= p.latency {
		p.latency = mean
		return
	}
	p.latency += time.Duration(latencyFall * float64(mean-p.latency))
}

// pacedPool runs fn(0) … fn(n-1) on workers added to wg: first as many as
// it is started with, then more, up to ceiling, whenever the mean latency
// of its calls so far says the calls left would not finish by end. It
// starts small and grows within the round, at most doubling per call
// latency, instead of opening the ceiling's connections at once.
type pacedPool struct {
	n, ceiling int
	end        time.Time
	fn         func(i int) time.Duration // returns the call's latency, 0 when it got no answer
	wg         *sync.WaitGroup

	next, workers, calls, latency atomic.Int64
}

func runPaced(wg *sync.WaitGroup, start, ceiling, n int, end time.Time, fn func(i int) time.Duration) *pacedPool {
	p := &pacedPool{n: n, ceiling: ceiling, end: end, fn: fn, wg: wg}
	for range min(start, n) {
		p.spawn()
	}
	return p
}

// spawn adds a worker unless there are ceiling already.
func (p *pacedPool) spawn() bool {
	for {
		w := p.workers.Load()
		if w >= int64(p.ceiling) {
			return false
		}
		if p.workers.CompareAndSwap(w, w+1) {
			break
		}
	}
	p.wg.Go(p.work)
	return true
}

func (p *pacedPool) work() {
	for {
		i := int(p.next.Add(1) - 1)
		if i >= p.n {
			return
		}
		if lat := p.fn(i); lat > 0 {
			p.latency.Add(int64(lat))
			p.calls.Add(1)
		}
		p.grow()
	}
}

// grow adds a worker when the calls left need more to finish by end at the
// mean latency so far. One per call answered at most, so the workers at
// most double per call latency: the first calls of a round, which open
// connections and are slow, do not open the ceiling's connections at once.
func (p *pacedPool) grow() {
	left := p.n - int(p.next.Load())
	calls := p.calls.Load()
	if left <= 0 || calls == 0 {
		return
	}
	mean := float64(p.latency.Load()) / float64(calls)
	need := p.ceiling
	if until := time.Until(p.end); until > 0 {
		need = int(math.Ceil(float64(left) * mean / float64(until)))
	}
	if int(p.workers.Load()) < min(need, p.ceiling) {
		p.spawn()
	}
}

// plan picks this interval's queues to ask: every queue that is due, the
// ones the last round did not reach first. The others are marked skipped.
func (r *region) plan(now time.Time) {
	r.due, r.later = r.due[:0], r.later[:0]
	for _, q := range r.queues {
		unreached := q.res.notStarted
		if q.grp.inactive {
			// Not polled: its counts, once it is active again, come from a
			// fresh answer, not from an idle queue's carried-forward zeros.
			q.res = queueResult{skipped: true}
			q.idleSince = time.Time{}
			continue
		}
		if !q.due(now) {
			q.res = queueResult{skipped: true}
			continue
		}
		if unreached {
			r.due = append(r.due, q)
		} else {
			r.later = append(r.later, q)
		}
	}
	r.due = append(r.due, r.later...)
}

// settle folds the round's call latencies into the pace and decides the
// region's notice. It runs after every worker has finished.
func (r *region) settle(deadline time.Duration) {
	var answered, notStarted, timedOut int
	var sum time.Duration
	for _, q := range r.due {
		switch {
		case q.res.notStarted:
			notStarted++
		case q.res.latency > 0:
			answered++
			sum += q.res.latency
		case q.res.class == model.ErrClassTimeout:
			timedOut++
		}
	}
	if answered > 0 {
		r.pace.observe(sum / time.Duration(answered))
	}

	notice := ""
	switch need := r.pace.need(len(r.due)); {
	case notStarted > 0:
		notice = fmt.Sprintf("region %s: %d of %d queues got no answer within the %s deadline (%d not asked in time, "+
			"%d timed out) with %d calls in flight at %s a call; if this lasts, raise aws.concurrency_per_region (%d) or interval",
			r.name, notStarted+timedOut, len(r.due), deadline, notStarted, timedOut, r.pace.limit,
			r.pace.latency.Round(time.Millisecond), r.pace.ceiling)
	case need > r.pace.ceiling:
		notice = fmt.Sprintf("region %s: %d queues at %s a call need %d calls in flight to be asked within %s; "+
			"aws.concurrency_per_region allows %d, so a round takes about %s: raise it or interval",
			r.name, len(r.due), r.pace.latency.Round(time.Millisecond), need, r.pace.target, r.pace.ceiling,
			(time.Duration(len(r.due)) * r.pace.latency / time.Duration(r.pace.ceiling)).Round(time.Millisecond))
	}
	switch {
	case notice != "" && r.notice == "":
		r.queues[0].log.Warn("a round of calls does not fit its deadline", zap.String("region", r.name), zap.String("why", notice))
	case notice == "" && r.notice != "":
		r.queues[0].log.Info("a round of calls fits its deadline again", zap.String("region", r.name))
	}
	r.notice = notice
	r.gauges.set(r, notStarted+timedOut)
	// Calls cut off by the deadline while every queue was asked are the
	// service's slowness, not the pacing's: those queues fail on their own.
}

// polling fills the group's polling figures: queues asked, requests per
// minute, what a month at that rate costs (SQS requests, and the CloudWatch
// metrics the group's queues are read for), and the notices of its regions.
func (g *group) polling(out *model.Polling, now time.Time, prices awscost.Prices) {
	asked, skipped := 0, 0
	for _, q := range g.queues {
		switch {
		case q.res.skipped:
			skipped++
		case !q.res.notStarted:
			asked++
		}
	}
	*out = model.Polling{
		Asked:             asked,
		RequestsPerMinute: g.requests.Add(now, float64(asked), g.interval),
	}
	if g.cloudWatch {
		out.CloudWatchMetricsPerMinute = float64(metricCount * len(g.queues))
	}
	bill := prices.Month(awscost.Rates{SQSRequests: out.RequestsPerMinute, MetricsRequested: out.CloudWatchMetricsPerMinute})
	out.MonthlyCost, out.CloudWatchMonthlyCost = bill.SQS, bill.CloudWatchReads
	for _, r := range g.regions {
		if r.notice != "" {
			out.Notices = append(out.Notices, r.notice)
		}
	}
	g.gauges.set(asked, skipped, out.RequestsPerMinute, out.MonthlyCost)
}
