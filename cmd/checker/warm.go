package main

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/poller"
)

// arrivalHistory reads every group's per-minute arrivals (messages sent to
// its queues, summed) over [from, to), for the warm start. The poller reads
// them from CloudWatch's NumberOfMessagesSent.
type arrivalHistory interface {
	ArrivalHistory(ctx context.Context, from, to time.Time) (map[string]model.MinuteHistory, error)
}

var _ arrivalHistory = (*poller.Poller)(nil)

// preloader takes the history into the groups' forecasts: the controller.
type preloader interface {
	Preload(h map[string]model.MinuteHistory) map[string]int
}

// warmStartTimeout bounds one warm start: reading up to 8 days of history
// for every queue, a few dozen CloudWatch calls for a thousand queues.
const warmStartTimeout = 2 * time.Minute

// historySpan is the longest forecast history of the groups that forecast
// (in either mode); 0 when none does.
func historySpan(groups []policy.Settings) time.Duration {
	var span time.Duration
	for _, g := range groups {
		g = g.WithDefaults()
		if g.Forecast.Off || g.Policy != policy.PolicyModel {
			continue
		}
		span = max(span, g.Forecast.History)
	}
	return span
}

// warmStart reads the arrival history of the last historySpan(groups),
// up to the start of now's minute, and preloads the groups' forecasts with
// it, so that the rhythm of the load is known from the first decisions.
// A failure is logged once and the forecasts learn online; history that
// came with the error is still used. It reads nothing when no group
// forecasts.
func warmStart(ctx context.Context, src arrivalHistory, to preloader, groups []policy.Settings, now time.Time, log *zap.Logger) {
	span := historySpan(groups)
	if span <= 0 {
		log.Debug("warm start skipped: no group forecasts")
		return
	}
	end := now.UTC().Truncate(time.Minute)
	from := end.Add(-span)
	began := time.Now()
	h, err := src.ArrivalHistory(ctx, from, end)
	if err != nil {
		log.Warn("warm start failed: the forecasts learn the arrivals online", zap.Time("from", from), zap.Time("to", end),
			zap.Int("groups_read", len(h)), zap.Error(err))
	}
	if len(h) == 0 {
		return
	}
	loaded := to.Preload(h)
	minutes := 0
	for _, n := range loaded {
		minutes += n
	}
	log.Info("warm start done", zap.Int("groups", len(loaded)), zap.Int("minutes", minutes),
		zap.Duration("took", time.Since(began)))
}

// warmer runs warm starts in the background, so that the first cycle does
// not wait for the history: the controller serialises each group's preload
// with its decisions, and keeps the minutes the group measures meanwhile.
// A new warm start (after a reload) cancels one still running, whose
// configuration is gone. It owns its goroutines: wait returns once they
// are done.
type warmer struct {
	ctx     context.Context // ends every warm start
	to      preloader
	log     *zap.Logger
	timeout time.Duration
	now     func() time.Time

	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newWarmer(ctx context.Context, to preloader, log *zap.Logger) *warmer {
	return &warmer{ctx: ctx, to: to, log: log, timeout: warmStartTimeout, now: time.Now}
}

// start begins a warm start of groups from src; a nil src (no history to
// read) starts none.
func (w *warmer) start(src arrivalHistory, groups []policy.Settings) {
	if src == nil {
		return
	}
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.timeout)
	w.cancel = cancel
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer cancel()
		warmStart(ctx, src, w.to, groups, w.now(), w.log)
	}()
}

// wait returns once every warm start has ended; cancel the warmer's context
// first to end them early.
func (w *warmer) wait() { w.wg.Wait() }
