package readmodel

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/model"
)

// The checker's own AWS bill (docs/cost.md): what its calls cost a month
// at the last minute's rate, priced by awscost. Per group: the SQS
// requests and CloudWatch metrics the observer reports for the group's
// queues (model.Polling) and the PutMetricData requests the actuator made
// for it (model.Action.MetricRequests), rated here over the last minute of
// decisions. The lease table belongs to no group: Leases that report its
// request units (TableUsage) add them to the total only.

// TableUsage is a Leases whose table is billed by request unit: what its
// calls consumed per minute over the last minute.
type TableUsage interface {
	RequestUnits() (readsPerMinute, writesPerMinute float64)
}

// AWSCost is a month of calls at the last minute's rates, and the rates.
type AWSCost struct {
	Rates awscost.Rates
	Bill  awscost.Bill
}

// CheckerAWSCost is the checker's own AWS bill: the groups it acts on and
// its lease table.
type CheckerAWSCost struct {
	AWSCost
	// Groups is the part of the groups this checker polls and acts on
	// (those another checker holds are billed there).
	Groups AWSCost
	// LeaseTable is the lease table's part; nil when the checker runs
	// alone, without one.
	LeaseTable *AWSCost
}

// SetPrices replaces the prices of the checker's own calls (after a
// reload); the next view and record use them.
func (m *Model) SetPrices(p awscost.Prices) {
	m.mu.Lock()
	m.prices = p
	m.mu.Unlock()
}

// meterCalls rates the group's calls of decision d, with action a (nil
// when none was taken); per is the span the group's first decision stands
// for. The model's lock must be held.
func (st *groupState) meterCalls(s model.GroupSample, d model.Decision, a *model.Action, per time.Duration) {
	if !st.lastCallsAt.IsZero() && d.At.After(st.lastCallsAt) {
		per = d.At.Sub(st.lastCallsAt)
	}
	st.lastCallsAt = d.At
	requests := 0
	if a != nil {
		requests = a.MetricRequests
	}
	st.calls = awscost.Rates{
		SQSRequests:           s.Polling.RequestsPerMinute,
		MetricsRequested:      s.Polling.CloudWatchMetricsPerMinute,
		PutMetricDataRequests: st.published.Add(d.At, float64(requests), per),
	}
}

// groupCost is a group's bill at the current prices; m.mu must be held.
func (m *Model) groupCost(st *groupState) AWSCost {
	if st == nil {
		return AWSCost{}
	}
	return AWSCost{Rates: st.calls, Bill: m.prices.Month(st.calls)}
}

// AWSCost returns the checker's own AWS bill now.
func (m *Model) AWSCost() CheckerAWSCost {
	m.mu.RLock()
	var groups awscost.Rates
	for _, g := range m.groups {
		if st := m.states[g.Group]; st != nil {
			groups = groups.Add(st.calls)
		}
	}
	prices, leases := m.prices, m.leases
	m.mu.RUnlock()

	out := CheckerAWSCost{Groups: AWSCost{Rates: groups, Bill: prices.Month(groups)}}
	total := groups
	if u, ok := leases.(TableUsage); ok {
		var table awscost.Rates
		table.ReadUnits, table.WriteUnits = u.RequestUnits()
		out.LeaseTable = &AWSCost{Rates: table, Bill: prices.Month(table)}
		total = total.Add(table)
	}
	out.AWSCost = AWSCost{Rates: total, Bill: prices.Month(total)}
	return out
}
