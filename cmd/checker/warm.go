package main

import (
	"context"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/poller"
)

// arrivalHistory reads, for the warm start, every group's per-minute
// arrivals (messages sent to its queues, summed) over [From, To), and the
// recent minutes of the measuring groups' fleets (deleted and in flight)
// over [FleetFrom, To), in one pass. The poller reads them from
// CloudWatch's NumberOfMessagesSent, NumberOfMessagesDeleted and
// ApproximateNumberOfMessagesNotVisible.
type arrivalHistory interface {
	History(ctx context.Context, req poller.HistoryRequest) (poller.History, error)
}

var _ arrivalHistory = (*poller.Poller)(nil)

// preloader takes the history into the groups' forecasts and fleet
// measurements: the controller.
type preloader interface {
	Preload(h map[string]model.MinuteHistory) map[string]int
	PreloadFleet(h map[string]model.FleetHistory) map[string]int
}

// warmStartTimeout bounds one warm start: reading up to 8 days of minutes
// and five weeks of five minutes for every queue, about two hundred
// CloudWatch calls for a thousand queues.
const warmStartTimeout = 2 * time.Minute

// warmStart reads the arrival history of the last
// controller.HistorySpan(groups) and the fleet history of the last
// measure.PreloadSpan (for the controller.Measuring groups; the poller
// reads it only for those with CloudWatch on), up to the start of now's
// minute, and preloads the groups' forecasts, burst learners and fleet
// measurements with them, so that the rhythm of the load, the recent bursts
// and the fleet's service time are known from the first decisions. A failure is
// logged once and the forecasts and measurements learn online; history that
// came with the error is still used. It reads nothing when no group
// needs arrival history (the model policy's) or measures.
//
// The fleet's minutes cost two GetMetricData metrics per queue of a
// measuring group with CloudWatch on, once per start or reload ($0.00002 a
// queue at $0.01 per 1,000 metrics requested; see poller.History).
func warmStart(ctx context.Context, src arrivalHistory, to preloader, groups []policy.Settings, now time.Time, log *zap.Logger) {
	span := controller.HistorySpan(groups)
	fleet := controller.Measuring(groups)
	if span <= 0 && len(fleet) == 0 {
		log.Debug("warm start skipped: no group reads arrival history or measures its fleet")
		return
	}
	end := now.UTC().Truncate(time.Minute)
	req := poller.HistoryRequest{From: end.Add(-span), To: end, FleetFrom: end.Add(-measure.PreloadSpan), Fleet: fleet}
	if controller.ReadsWeeks(groups) {
		// The weeks before the minutes, at five minutes: the forecast's
		// weekly rhythms.
		req.WeeklyFrom = end.Add(-forecast.CoarseSpan)
	}
	began := time.Now()
	h, err := src.History(ctx, req)
	if err != nil {
		log.Warn("warm start failed: the forecasts and fleet measurements learn online", zap.Time("from", req.From), zap.Time("fleet_from", req.FleetFrom), zap.Time("to", end),
			zap.Int("groups_read", len(h.Arrivals)), zap.Int("fleets_read", len(h.Fleet)), zap.Error(err))
	}
	if len(h.Arrivals) == 0 && len(h.Fleet) == 0 {
		return
	}
	var loaded, measured map[string]int
	if len(h.Arrivals) > 0 {
		loaded = to.Preload(h.Arrivals)
	}
	if len(h.Fleet) > 0 {
		measured = to.PreloadFleet(h.Fleet)
	}
	minutes, fleetMinutes := 0, 0
	for _, n := range loaded {
		minutes += n
	}
	for _, n := range measured {
		fleetMinutes += n
	}
	log.Info("warm start done", zap.Int("groups", len(loaded)), zap.Int("minutes", minutes),
		zap.Int("fleets", len(measured)), zap.Int("fleet_minutes", fleetMinutes),
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
	// src and groups are those of the last start, for takeovers.
	src    arrivalHistory
	groups []policy.Settings
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
	w.src, w.groups = src, groups
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer cancel()
		warmStart(ctx, src, w.to, groups, w.now(), w.log)
		// Reading the configuration, setting up every queue and reading
		// the history leave more garbage than the checker ever makes
		// again (at 10,000 queues the RSS peaks some 15 MiB above where
		// it settles). Give it back now, not over the next minute as
		// the runtime's scavenger would: one collection, once per start
		// or reload.
		debug.FreeOSMemory()
	}()
}

// takeover warm-starts the named groups, taken from another checker, in
// one read beside the loop and beside any warm start in progress: their
// forecasts and fleet measurements get the minutes since this checker
// started, which its own samples do not cover (it did not poll them).
// The takeover's scale-in hold protects their first decisions meanwhile.
func (w *warmer) takeover(names []string) {
	w.mu.Lock()
	src, all := w.src, w.groups
	w.mu.Unlock()
	if src == nil {
		return
	}
	var groups []policy.Settings
	for _, g := range all {
		if slices.Contains(names, g.Group) {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return
	}
	w.log.Info("warming up the groups taken over", zap.Strings("groups", names))
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		ctx, cancel := context.WithTimeout(w.ctx, w.timeout)
		defer cancel()
		warmStart(ctx, src, w.to, groups, w.now(), w.log)
	}()
}

// wait returns once every warm start has ended; cancel the warmer's context
// first to end them early.
func (w *warmer) wait() { w.wg.Wait() }
