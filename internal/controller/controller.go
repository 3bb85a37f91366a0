// Package controller is the checker's loop: every interval it observes every
// group, asks the policy for a decision, hands the decision to the actuator,
// and records what happened for metrics and logs, and in the read model the
// pages read (internal/readmodel, see Views). The daemon drives it with AWS
// behind the Observer and Actuator; the simulator and the demo drive the
// same code with a simulated queue and fleet.
package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// Options wire a Controller.
type Options struct {
	Groups   []policy.Settings // one per group, names unique, in configuration order
	Observer Observer
	Actuator Actuator // nil: decide only
	Logger   *zap.Logger
	// Registerer receives the group metrics; nil exports none.
	Registerer prometheus.Registerer
	// History is how far back the status page's charts reach; 0 means 1 hour.
	History time.Duration
	// Gate, when set, shares the groups with other checkers: a group is
	// acted on only while the gate permits it.
	Gate Gate
	// Prices price the checker's own AWS calls (see readmodel.AWSCost);
	// zero prices bill nothing.
	Prices awscost.Prices
	// Wall is the clock of the liveness series
	// (checker_last_success_timestamp_seconds), which Prometheus compares
	// with its own time(); nil stamps them with the cycle's time, the now
	// passed to RunOnce. The demo runs its cycles on a faster, simulated
	// clock and sets time.Now here.
	Wall func() time.Time
}

// Controller runs cycles. It is safe for concurrent use: the loop runs
// cycles while the HTTP server reads the health and the views.
type Controller struct {
	mu       sync.RWMutex
	groups   []policy.Settings
	obs      Observer
	act      Actuator
	gate     Gate
	log      *zap.Logger
	wall     func() time.Time // nil: the cycle's time (Options.Wall)
	metrics  *metrics
	views    *readmodel.Model
	states   map[string]*groupState
	lastGood time.Time // the time of the last good cycle, as passed to RunOnce
	firstRun time.Time
	lastRun  time.Time
	lastErr  error
	// restartNeeded says why the running configuration must be restarted
	// to change (see SetRestartNeeded); "" when it need not.
	restartNeeded string
	cycles        int
	// interval is Run's, the span a group's first decision stands for in
	// the rate of its calls.
	interval time.Duration
	// cycle is held through each cycle, and by Reload while it swaps: a
	// reload takes effect between cycles.
	cycle sync.Mutex
	// reloading is set from a Reload's call until its swap: the cycle
	// running meanwhile acts no more, on a configuration that is going,
	// but for the groups in unchanged (under mu), which act on the same
	// fleet and metrics under both.
	reloading atomic.Bool
	unchanged map[string]bool
}

// groupState is what the controller keeps about one group between cycles.
type groupState struct {
	// deciding serialises the uses of policy: a cycle's Decide and a warm
	// start's Preload (see Preload).
	deciding sync.Mutex
	policy   policy.State
	// lastLogged is the last decision logged (when haveLogged), a value so
	// that recording one allocates nothing.
	lastLogged model.Decision
	haveLogged bool
	// actionFailing is set while the group's last action failed.
	actionFailing bool
	// elsewhere is set while another checker holds the group's lease: the
	// group is neither decided nor exported here.
	elsewhere bool
	// slo is the estimate of the messages started within the promise and
	// the error budget; only cycles touch it (under Controller.cycle).
	slo groupSLO
}

// New checks the options and makes a Controller.
func New(o Options) (*Controller, error) {
	if o.Observer == nil {
		return nil, errors.New("controller: an observer is required")
	}
	if err := checkGroups(o.Groups); err != nil {
		return nil, err
	}
	var leases readmodel.Leases
	if o.Gate != nil {
		leases = o.Gate
	}
	c := &Controller{
		groups: slices.Clone(o.Groups),
		obs:    o.Observer,
		act:    o.Actuator,
		gate:   o.Gate,
		log:    o.Logger,
		wall:   o.Wall,
		views:  readmodel.New(readmodel.Options{Groups: o.Groups, History: o.History, Leases: leases, Prices: o.Prices}),
		states: map[string]*groupState{},
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if o.Registerer != nil {
		m, err := newMetrics(o.Registerer)
		if err != nil {
			return nil, err
		}
		c.metrics = m
	}
	for _, g := range c.groups {
		c.states[g.Group] = &groupState{}
	}
	return c, nil
}

func checkGroups(groups []policy.Settings) error {
	seen := map[string]bool{}
	for i, g := range groups {
		if g.Group == "" {
			return fmt.Errorf("controller: group %d has no name", i)
		}
		if seen[g.Group] {
			return fmt.Errorf("controller: group %q listed twice", g.Group)
		}
		seen[g.Group] = true
	}
	return nil
}

// Reload swaps in new groups, observer and actuator, as after a
// configuration reload. It takes effect between cycles: a cycle running
// when it is called makes no further action (its decisions are still
// recorded, saying so) and Reload returns once that cycle has ended, so
// that nothing acts on the old configuration, nor on a fleet it no longer
// lists, after Reload returns. Groups that keep their name keep their state
// (smoothed arrivals, stabilisation window, history); groups that are gone
// lose theirs and their metrics. The groups named in unchanged act on the
// same fleet and metrics under both configurations (config.SameTargets):
// the cycle running still acts for them, so that reloads, however often
// they come, never keep such a group from acting.
func (c *Controller) Reload(groups []policy.Settings, obs Observer, act Actuator, unchanged ...string) error {
	if obs == nil {
		return errors.New("controller: an observer is required")
	}
	if err := checkGroups(groups); err != nil {
		return err
	}
	// The cycle running acts no more, and the swap waits for its end: no
	// action of the old configuration follows the reload, but for the
	// groups that act on the same things under both (unchanged): a storm
	// of reloads would otherwise keep every cycle from acting.
	keep := make(map[string]bool, len(unchanged))
	for _, g := range unchanged {
		keep[g] = true
	}
	c.mu.Lock()
	c.unchanged = keep
	c.mu.Unlock()
	c.reloading.Store(true)
	defer c.reloading.Store(false)
	c.cycle.Lock()
	defer c.cycle.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	states := map[string]*groupState{}
	for _, g := range groups {
		if st, ok := c.states[g.Group]; ok {
			states[g.Group] = st
		} else {
			states[g.Group] = &groupState{}
		}
	}
	for name := range c.states {
		if _, ok := states[name]; !ok && c.metrics != nil {
			c.metrics.forget(name)
		}
	}
	c.groups, c.obs, c.act, c.states = slices.Clone(groups), obs, act, states
	c.views.SetGroups(groups)
	return nil
}

// Views returns the read model the controller feeds: what the pages, /api
// and the KEDA scaler read of the groups.
func (c *Controller) Views() *readmodel.Model { return c.views }

// RunOnce is one cycle at time now: observe every group, decide, act. It
// returns the decisions in group order. An error from the observer means
// nothing was learned: no decision is made, the last ones stand, and the
// error is returned. Errors of single actions are recorded on their group
// and joined into the returned error; the other groups still act.
func (c *Controller) RunOnce(ctx context.Context, now time.Time) ([]model.Decision, error) {
	c.cycle.Lock()
	defer c.cycle.Unlock()
	c.mu.RLock()
	groups, obs, act, gate := c.groups, c.obs, c.act, c.gate
	c.mu.RUnlock()

	start := time.Now()
	if gate != nil {
		// The gate logs its own failures once per change and reports them on
		// /healthz; a group whose lease was not renewed is not acted on.
		_ = gate.Sync(ctx, now)
		// Only the groups this checker holds are polled; a group whose lease
		// was just taken is polled from this cycle on, before its first
		// decision.
		if ga, ok := obs.(GroupActivator); ok {
			for _, g := range groups {
				ga.SetGroupActive(g.Group, gate.Lease(g.Group).Held)
			}
		}
	}
	observations, err := obs.Observe(ctx, now)
	if err != nil {
		err = fmt.Errorf("observe: %w", err)
		c.finishCycle(now, start, false, err)
		return nil, err
	}
	byGroup := make(map[string]model.Observation, len(observations))
	for _, o := range observations {
		byGroup[o.Sample.Group] = o
	}

	decisions := make([]model.Decision, 0, len(groups))
	var actErrs []error
	anyData, decided := false, 0
	var unanswered error // why the first group without data has none
	for _, g := range groups {
		if gate != nil && !gate.Lease(g.Group).Held {
			c.leaveToPeer(g.Group)
			continue
		}
		decided++
		o, ok := byGroup[g.Group]
		if !ok {
			// The observer said nothing of this group: that is missing data.
			o = model.Observation{Sample: model.GroupSample{Group: g.Group, At: now}}
		}
		if !o.Sample.Missing() {
			anyData = true
		} else if unanswered == nil {
			unanswered = noAnswer(o.Sample)
		}
		d, actErr, ok := c.decideGroup(ctx, g, o, now, obs, act, gate)
		if !ok { // reloaded away mid-cycle
			continue
		}
		if actErr != nil {
			actErrs = append(actErrs, actErr)
		}
		decisions = append(decisions, d)
	}
	err = errors.Join(actErrs...)
	good := anyData || decided == 0
	cause := err
	if !good && cause == nil {
		// Health says why no cycle is good: the queues' own errors.
		cause = unanswered
	}
	c.finishCycle(now, start, good, cause)
	return decisions, err
}

// decideGroup is one group's part of a cycle: decide on its observation,
// act on the decision where the lease and the reload state permit, and
// record both, with the promise's estimate. ok is false when the group was
// reloaded away mid-cycle; actErr is the action's error, naming the group.
func (c *Controller) decideGroup(ctx context.Context, g policy.Settings, o model.Observation, now time.Time,
	obs Observer, act Actuator, gate Gate) (d model.Decision, actErr error, ok bool) {
	c.mu.Lock()
	st := c.states[g.Group]
	if st != nil {
		st.elsewhere = false
	}
	c.mu.Unlock()
	if st == nil {
		return model.Decision{}, nil, false
	}
	if gate != nil {
		g.TakenOver = gate.Lease(g.Group).Since
	}
	var buf [24]measure.GoodMinute // the most the measurement keeps
	st.deciding.Lock()
	d = policy.Decide(g, o.Sample, o.Fleet, &st.policy, now)
	minutes := st.policy.FleetMinutes(buf[:0])
	st.deciding.Unlock()
	if le, ok := obs.(LoadExpecter); ok && d.Forecast != nil {
		// Every queue at full rate until a minute past the load's
		// expected start; renewed while the forecast stands.
		le.SetExpectingLoad(g.Group, maxTime(d.Forecast.At, now).Add(time.Minute))
	}
	var action *model.Action
	actx, permitted, done := ctx, true, func() {}
	if gate != nil {
		var until time.Time
		if until, permitted = gate.Permit(g.Group); permitted {
			actx, done = context.WithDeadline(ctx, until)
		}
	}
	if act != nil && permitted {
		permitted, d = c.mayAct(d)
	}
	if act != nil && permitted {
		// An Apply that partly failed (metrics sent, scaling refused) still
		// says what it did; keep both.
		a, err := act.Apply(actx, d, o.Fleet)
		action = &a
		if err != nil {
			actErr = fmt.Errorf("group %s: %w", g.Group, err)
		}
	}
	done()
	step, status := st.observeSLO(g, o, d, now)
	c.record(g, st, o, d, action, actErr, minutes, step, status)
	return d, actErr, true
}

// noAnswer says why a group's sample has no data: its first queue failure.
func noAnswer(s model.GroupSample) error {
	if len(s.Failures) == 0 {
		return fmt.Errorf("no queue of group %s answered", s.Group)
	}
	f := s.Failures[0]
	return fmt.Errorf("no queue of group %s answered (%d failed); %s in %s: %s", s.Group, len(s.Failures), f.Queue, f.Region, f.Message)
}

// mayAct reports whether a decision may be acted on: not while a reload
// is waiting for this cycle to end, nor while the configuration running
// is one a refused reload says must be restarted to change (a checker
// that should now share its groups, or stop sharing them, would act beside
// the others). The decision then carries why it was not acted on, in its
// NotActed; the policy's reasons stay as the policy gave them.
func (c *Controller) mayAct(d model.Decision) (bool, model.Decision) {
	c.mu.RLock()
	restartNeeded := c.restartNeeded
	unchanged := c.unchanged[d.Group]
	c.mu.RUnlock()
	d.NotActed = model.NotActedOn(restartNeeded, c.reloading.Load() && !unchanged)
	return d.NotActed == nil, d
}

// leaveToPeer marks a group whose lease another checker holds: its series
// are removed once, when it moves away, so that its alerts fire on the
// holder alone; and its last decision, sample and action are dropped from
// the views (readmodel.Model.Leave), so that they show the group's owner
// rather than stale numbers.
func (c *Controller) leaveToPeer(group string) {
	c.mu.Lock()
	st := c.states[group]
	moved := st != nil && !st.elsewhere
	if moved {
		st.elsewhere = true
		st.haveLogged, st.actionFailing = false, false
		// Back from the other checker, the estimate counts arrivals from
		// its first cycle here, not over the time away.
		st.slo.have = false
	}
	c.mu.Unlock()
	if !moved {
		return
	}
	c.views.Leave(group)
	if c.metrics != nil {
		c.metrics.forget(group)
	}
}

// record feeds the decision to the read model, the metrics and the logs;
// minutes are the fleet measurement's good minutes after the decision,
// step and status the promise's estimate of the cycle and its budget.
func (c *Controller) record(g policy.Settings, st *groupState, o model.Observation, d model.Decision, a *model.Action, actErr error,
	minutes []measure.GoodMinute, step slo.Step, status slo.Status) {
	c.mu.Lock()
	interval := c.interval
	prevActErr := st.actionFailing
	st.actionFailing = actErr != nil
	logged, hadLogged := st.lastLogged, st.haveLogged
	st.lastLogged, st.haveLogged = d, true
	c.mu.Unlock()
	own := c.views.Record(readmodel.Record{Settings: g, Sample: o.Sample, Fleet: o.Fleet, Decision: d, Action: a,
		ActionErr: actErr, FleetMinutes: minutes, Interval: interval, SLO: &status})
	ownBill := own.Bill.Total

	if c.metrics != nil {
		c.metrics.observe(g, d, a)
		c.metrics.observeSLO(g.Group, step, status)
		c.metrics.groupAWSCost.WithLabelValues(g.Group).Set(ownBill)
	}
	var prev *model.Decision
	if hadLogged {
		prev = &logged
	}
	c.logDecision(g.Group, prev, d)
	switch {
	case actErr != nil && !prevActErr:
		c.log.Warn("action failed; the fleet keeps its count", zap.String("group", g.Group), zap.Error(actErr))
	case actErr == nil && prevActErr:
		c.log.Info("actions work again", zap.String("group", g.Group))
	}
	if c.metrics != nil && actErr != nil {
		c.metrics.actionErrors.WithLabelValues(g.Group).Inc()
	}
}

// logDecision logs at info when the desired count changes, and warns when a
// group becomes held or capped or its diagnosis changes, and once for each
// operator switch it cannot read or follow.
func (c *Controller) logDecision(group string, prev *model.Decision, d model.Decision) {
	log := c.log.With(zap.String("group", group))
	if prev == nil || prev.DesiredWorkers != d.DesiredWorkers {
		from := d.CurrentWorkers
		if prev != nil {
			from = prev.DesiredWorkers
		}
		fields := []zap.Field{zap.Int("from", from), zap.Int("to", d.DesiredWorkers),
			zap.Int("recommended", d.RecommendedWorkers), zap.Int64("backlog", d.Backlog),
			zap.String("diagnosis", d.Diagnosis), zap.Strings("reasons", d.Reasons)}
		if d.NotActed != nil {
			fields = append(fields, zap.String("not_acted", d.NotActed.Message))
		}
		log.Info("decision changed", fields...)
	}
	if d.Held && (prev == nil || !prev.Held || prev.HoldReason != d.HoldReason) {
		log.Warn("holding the fleet", zap.String("hold_reason", d.HoldReason), zap.Int("desired", d.DesiredWorkers))
	}
	for _, p := range d.SwitchProblems {
		if prev == nil || !slices.Contains(prev.SwitchProblems, p) {
			log.Warn("switch not understood; the group is held", zap.String("problem", p))
		}
	}
	if d.Capped && (prev == nil || !prev.Capped) {
		log.Warn("capped: the target is out of reach", zap.Int("recommended", d.RecommendedWorkers),
			zap.Int("desired", d.DesiredWorkers), zap.Strings("reasons", d.Reasons))
	}
	if prev != nil && prev.Diagnosis != d.Diagnosis {
		// Trouble is a warning; leaving it is news; moving between the calm
		// states (idle, healthy, draining) is detail.
		fields := []zap.Field{zap.String("from", prev.Diagnosis), zap.String("to", d.Diagnosis)}
		switch {
		case troubled(d.Diagnosis):
			log.Warn("diagnosis changed", fields...)
		case troubled(prev.Diagnosis):
			log.Info("diagnosis changed", fields...)
		default:
			log.Debug("diagnosis changed", fields...)
		}
	}
}

// troubled reports a diagnosis that needs someone's attention.
func troubled(diagnosis string) bool {
	switch diagnosis {
	case model.DiagUnderProvisioned, model.DiagNotConsuming, model.DiagStuck, model.DiagCapped, model.DiagDownstreamLimited, model.DiagMessagesHeld, model.DiagUnknown,
		model.DiagLate:
		return true
	}
	return false
}

func (c *Controller) finishCycle(now, start time.Time, good bool, err error) {
	took := time.Since(start)
	c.mu.Lock()
	if c.firstRun.IsZero() {
		c.firstRun = now
	}
	c.lastRun = now
	c.lastErr = err
	c.cycles++
	if good {
		c.lastGood = now
	}
	c.mu.Unlock()
	c.exportAWSCost()
	if c.metrics != nil {
		c.metrics.cycleDuration.Observe(took.Seconds())
		if good {
			at := now
			if c.wall != nil {
				at = c.wall()
			}
			c.metrics.lastSuccess.Set(float64(at.UnixNano()) / 1e9)
		} else {
			c.metrics.cycleFailures.Inc()
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
