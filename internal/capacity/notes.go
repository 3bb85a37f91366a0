package capacity

import (
	"fmt"
	"strings"
)

// planPoints lists the current pool, each floor, the target and, with a
// cap, the capped pool, each with an operator note.
func planPoints(m *model, p *Plan) []PlanPoint {
	in := m.in
	cur := p.Current
	pts := []PlanPoint{{
		Point: PointCurrent, Workers: cur.Workers, NetDrain: cur.NetDrain,
		DrainSeconds: cur.DrainSeconds, Utilization: cur.Utilization,
		Note: drainNote(in.Backlog, cur, in.DrainTarget) + utilizationNote(cur.Utilization, in.Utilization),
	}}
	add := func(name string, w int, note string) {
		s := m.pool(w, m.qStart)
		pts = append(pts, PlanPoint{
			Point: name, Workers: w, NetDrain: s.NetDrain,
			DrainSeconds: s.DrainSeconds, Utilization: s.Utilization, Note: note,
		})
	}

	drain := "no backlog when added workers start: keeps pace with arrivals"
	if m.qStart > 0 {
		drain = fmt.Sprintf("clears the %s messages at start within the %s target, with arrivals continuing",
			FormatNumber(m.qStart), FormatSeconds(in.DrainTarget))
	}
	add(PointDrainFloor, p.DrainFloor, drain)

	add(PointUtilizationFloor, p.UtilizationFloor, fmt.Sprintf(
		"keeps steady utilization at or below the %s ceiling", FormatPercent(in.Utilization)))

	floors := []string{
		fmt.Sprintf("drain %d", p.DrainFloor),
		fmt.Sprintf("utilization %d", p.UtilizationFloor),
	}
	if p.WaitFloor != nil {
		w := *p.WaitFloor
		note := fmt.Sprintf("%s of messages start within the %s target (%s)",
			FormatPercent(in.LatencyQuantile), FormatSeconds(in.LatencyTarget), in.WaitModel())
		if q, ok := m.erlang(w); ok && q.Stable {
			note = fmt.Sprintf("%s of messages start within the %s target, the daemon's promise (%s: %s wait longer; mean wait %s)",
				FormatPercent(in.LatencyQuantile), FormatSeconds(in.LatencyTarget), in.WaitModel(), FormatPercent(q.WaitExceeds(in.LatencyTarget)), FormatSeconds(q.MeanWait))
		}
		add(PointWaitFloor, w, note)
		if mw := p.MeanWaitFloor; mw != nil {
			add(PointMeanWaitFloor, *mw, fmt.Sprintf("mean queue wait within the %s target alone: a weaker promise, not sized for", FormatSeconds(in.LatencyTarget)))
		}
		floors = append(floors, fmt.Sprintf("wait %d", w))
	}

	add(PointTarget, p.RecommendedWorkers, fmt.Sprintf("max(%s) + %d safety",
		strings.Join(floors, ", "), in.SafetyWorkers))

	if in.Cap > 0 {
		var note string
		if p.Capped {
			s := m.pool(p.PlannedWorkers, m.qStart)
			note = fmt.Sprintf("target blocked: the cap of %d is %d below it; %s",
				in.Cap, p.RecommendedWorkers-in.Cap, drainNote(m.qStart, s, in.DrainTarget))
		} else {
			note = fmt.Sprintf("the cap of %d does not bind: %d workers to spare", in.Cap, in.Cap-p.RecommendedWorkers)
		}
		add(PointCapped, p.PlannedWorkers, note)
	}
	return pts
}

// drainNote says whether and when a pool drains a backlog, against the target.
func drainNote(backlog float64, s PoolState, target float64) string {
	switch {
	case backlog <= 0 && s.NetDrain >= 0:
		return "no backlog"
	case backlog <= 0:
		return fmt.Sprintf("no backlog yet, but it grows at %s msg/s", FormatNumber(-s.NetDrain))
	case s.DrainSeconds == nil && s.Workers == 0:
		return fmt.Sprintf("no workers: the backlog grows at %s msg/s", FormatNumber(-s.NetDrain))
	case s.DrainSeconds == nil && s.NetDrain == 0:
		return "never drains: service only matches arrivals"
	case s.DrainSeconds == nil:
		return fmt.Sprintf("never drains: the backlog grows at %s msg/s", FormatNumber(-s.NetDrain))
	case *s.DrainSeconds <= target:
		return fmt.Sprintf("drains in %s, within the %s target", FormatSeconds(*s.DrainSeconds), FormatSeconds(target))
	default:
		return fmt.Sprintf("drains in %s, %s past the %s target", FormatSeconds(*s.DrainSeconds),
			FormatSeconds(*s.DrainSeconds-target), FormatSeconds(target))
	}
}

// utilizationNote compares a utilisation with its ceiling.
func utilizationNote(u *float64, ceiling float64) string {
	switch {
	case u == nil:
		return ""
	case *u >= 1:
		return fmt.Sprintf("; %s utilized: overloaded", FormatPercent(*u))
	case *u > ceiling:
		return fmt.Sprintf("; %s utilized, above the %s ceiling", FormatPercent(*u), FormatPercent(ceiling))
	default:
		return fmt.Sprintf("; %s utilized, within the %s ceiling", FormatPercent(*u), FormatPercent(ceiling))
	}
}

// checkpoints are the plan's checks: the inputs to
// confirm, the decision the plan supports, and what to watch after acting.
func checkpoints(m *model, p *Plan) []Checkpoint {
	in := m.in
	var cs []Checkpoint

	arrival := fmt.Sprintf("%s msg/s modeled", FormatNumber(m.lam))
	if in.BurstPercent > 0 {
		arrival += fmt.Sprintf(" (%s measured + %s %% burst reserve)", FormatNumber(in.ArrivalRate), FormatNumber(in.BurstPercent))
	}
	cs = append(cs, Checkpoint{
		Checkpoint: "arrival rate",
		Signal:     arrival,
		Action:     "confirm against the enqueue rate (NumberOfMessagesSent) of the busiest minute; re-plan if it is higher",
		Note:       "a full-day average hides the burst that drives worker count",
	})

	var throughput string
	if in.ServiceTime > 0 {
		throughput = fmt.Sprintf("%s msg/s per worker effective (%d at once, %s each",
			FormatNumber(m.mu), m.k, FormatSeconds(in.ServiceTime))
	} else {
		throughput = fmt.Sprintf("%s msg/s per worker effective (%s measured",
			FormatNumber(m.mu), FormatNumber(in.PerWorker))
	}
	if in.OverheadPercent > 0 {
		throughput += fmt.Sprintf(", less %s %% overhead", FormatNumber(in.OverheadPercent))
	}
	cs = append(cs, Checkpoint{
		Checkpoint: "worker throughput",
		Signal:     throughput + ")",
		Action:     "compare with completed messages per worker (NumberOfMessagesDeleted ÷ workers) in the last busy hour",
		Note:       "locks, throttling, retries and per-message setup all lower useful throughput",
	})

	startNote := "added workers are assumed to take messages at once"
	if in.StartDelay > 0 {
		startNote = fmt.Sprintf("the current pool works the backlog alone for the %s start delay; measure launch to first message",
			FormatSeconds(in.StartDelay))
	}
	cs = append(cs, Checkpoint{
		Checkpoint: "backlog at start",
		Signal:     fmt.Sprintf("%s messages now, %s when added workers start", FormatNumber(in.Backlog), FormatNumber(m.qStart)),
		Action:     "read ApproximateNumberOfMessages (plus in-flight and delayed, if they count) before acting",
		Note:       startNote,
	})

	cur := p.Current
	drainAction := fmt.Sprintf("hold: %d workers already meet the drain target", cur.Workers)
	if cur.Workers < p.PlannedWorkers {
		drainAction = fmt.Sprintf("scale out to %d workers", p.PlannedWorkers)
	} else if cur.Workers > p.PlannedWorkers {
		drainAction = fmt.Sprintf("%d workers are enough; scale in only once the backlog is gone", p.PlannedWorkers)
	}
	cs = append(cs, Checkpoint{
		Checkpoint: "drain",
		Signal:     fmt.Sprintf("current %d workers — %s", cur.Workers, drainNote(in.Backlog, cur, in.DrainTarget)),
		Action:     drainAction,
		Note:       "capacity to recover from a backlog is separate from steady-state capacity, and the larger one",
	})

	util := "no workers"
	if cur.Utilization != nil {
		util = FormatPercent(*cur.Utilization)
	}
	cs = append(cs, Checkpoint{
		Checkpoint: "utilization",
		Signal:     fmt.Sprintf("current %s against the %s ceiling", util, FormatPercent(in.Utilization)),
		Action:     fmt.Sprintf("keep at least %d workers after the backlog clears", p.SteadyStateWorkers),
		Note:       "utilization can pass while the drain fails: the backlog, not steady load, sets the catch-up size",
	})

	if in.LatencyTarget > 0 {
		signal := fmt.Sprintf("planned %d workers: no stable queue, no finite wait", p.PlannedWorkers)
		if q := p.Queueing; q.Stable && q.MeanWaitSeconds != nil {
			signal = fmt.Sprintf("planned %d workers: mean queue wait %s against the %s target, %s of messages wait",
				p.PlannedWorkers, FormatSeconds(*q.MeanWaitSeconds), FormatSeconds(in.LatencyTarget),
				FormatPercent(*q.WaitProbability))
		}
		cs = append(cs, Checkpoint{
			Checkpoint: "latency",
			Signal:     signal,
			Action:     "alarm on ApproximateAgeOfOldestMessage, the number in the same units as the promise",
			Note:       "Erlang C assumes random arrivals and exponential service: real waits are longer, so read it as a best case",
		})
	}

	if in.Cap > 0 {
		c := Checkpoint{
			Checkpoint: "cap",
			Signal:     fmt.Sprintf("target %d against a cap of %d", p.RecommendedWorkers, in.Cap),
			Action:     "none: the cap leaves the target reachable",
			Note:       "a connection pool, rate limit or quota caps the fleet before the queue does",
		}
		if p.Capped {
			c.Action = "raise the cap, relax the drain target, lower arrivals, or reduce downstream cost per message"
		}
		cs = append(cs, c)
	}

	net := NetDrain(float64(p.PlannedWorkers), m.mu, m.lam)
	half := in.StartDelay + in.DrainTarget/2
	expect := m.backlogAt(half, net)
	cs = append(cs, Checkpoint{
		Checkpoint: "burn-down",
		Signal:     fmt.Sprintf("backlog at or below %s messages %s from now", FormatNumber(expect), FormatSeconds(half)),
		Action:     "if it is above that, re-measure arrivals and per-worker throughput and re-plan",
		Note:       "the age of the oldest message should fall with the backlog; if it does not, workers are stuck, not short",
	})

	cs = append(cs, Checkpoint{
		Checkpoint: "after the drain",
		Signal:     "backlog near zero and the oldest message younger than the promise",
		Action:     fmt.Sprintf("return to %d steady-state workers", min(p.SteadyStateWorkers, p.PlannedWorkers)),
		Note:       "catch-up workers are temporary; keep the safety workers",
	})
	return cs
}

// warnings are the plan's outcomes that need a decision from a person.
func warnings(m *model, p *Plan) []string {
	in := m.in
	var ws []string
	if p.Capped {
		ws = append(ws, fmt.Sprintf("the target of %d workers is above the cap of %d: the plan is blocked",
			p.RecommendedWorkers, in.Cap))
	}
	planned := m.pool(p.PlannedWorkers, m.qStart)
	switch {
	case planned.NetDrain < 0:
		ws = append(ws, fmt.Sprintf("the planned %d workers serve %s msg/s against %s arriving: the backlog grows",
			p.PlannedWorkers, FormatNumber(planned.ServiceRate), FormatNumber(m.lam)))
	case m.qStart > 0 && planned.DrainSeconds == nil:
		ws = append(ws, fmt.Sprintf("the planned %d workers only match arrivals: the backlog never drains", p.PlannedWorkers))
	case planned.DrainSeconds != nil && *planned.DrainSeconds > in.DrainTarget:
		ws = append(ws, fmt.Sprintf("the planned %d workers drain the backlog in %s, past the %s target",
			p.PlannedWorkers, FormatSeconds(*planned.DrainSeconds), FormatSeconds(in.DrainTarget)))
	}
	if p.PlannedWorkers > MaxServers/m.k {
		ws = append(ws, fmt.Sprintf("the planned pool is beyond %s servers: the queueing estimate was not evaluated",
			FormatNumber(MaxServers)))
	}
	return ws
}
