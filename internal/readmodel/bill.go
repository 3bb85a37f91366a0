package readmodel

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// The fleet's bill (docs/cost.md): every decision adds the time since the
// one before at that decision's counts, a left Riemann sum over the
// decisions of the last day, kept per minute:
//
//   - the fleet: current workers (what AWS runs and bills, starting ones
//     included) × the time;
//   - sized with the forecast: the recommendation, within min, max and cap;
//   - sized without it: the count the load then present needed
//     (Decision.NeedWithoutForecast), within the same bounds;
//   - messages served: the arrival estimate × the time.
//
// The two sized figures are the rule's asks at the same moments, not a
// replay: without the forecast the backlog, and so later asks, would have
// differed. Their difference is what the forecast added to the asks,
// which is negative when it cost money.

// billWindow is how far back the bill reaches; billMaxGap the longest span
// between two decisions that is billed (a longer one, a stopped checker,
// is billed up to this).
const (
	billWindow = 24 * time.Hour
	billMaxGap = 5 * time.Minute
)

// billMinute is one minute of the bill: worker-seconds and messages.
type billMinute struct {
	minute               int64 // Unix minutes
	fleet, with, without float64
	messages             float64
	seconds              float64
}

// meter is a group's bill over the last day.
type meter struct {
	minutes []billMinute // oldest first, at most one a minute
	// last is the last decision (when haveLast) and lastFleet the fleet it
	// was made for; kept as values, so that billing allocates nothing.
	last      model.Decision
	haveLast  bool
	lastFleet model.Fleet
}

// clampTo is n within the bounds the policy sets for the fleet f: the
// group's min, max and cap and the fleet's own (model.Limits.For).
func clampTo(s policy.Settings, f model.Fleet, n int) int {
	return s.Limits().For(f).Clamp(n)
}

// add bills the time from the previous decision to d at the previous
// decision's counts, within the bounds of the fleet it was made for, and
// keeps d and its fleet f for the next.
func (m *meter) add(s policy.Settings, f model.Fleet, d model.Decision) {
	prev, prevFleet, had := m.last, m.lastFleet, m.haveLast
	m.last, m.lastFleet, m.haveLast = d, f, true
	if !had {
		return
	}
	dt := min(d.At.Sub(prev.At), billMaxGap).Seconds()
	if !(dt > 0) {
		return
	}
	with := clampTo(s, prevFleet, prev.RecommendedWorkers)
	without := with
	if prev.NeedWithoutForecast != nil {
		without = clampTo(s, prevFleet, *prev.NeedWithoutForecast)
	}
	minute := d.At.Unix() / 60
	if n := len(m.minutes); n == 0 || m.minutes[n-1].minute != minute {
		m.minutes = append(m.minutes, billMinute{minute: minute})
	}
	b := &m.minutes[len(m.minutes)-1]
	b.fleet += float64(max(prev.CurrentWorkers, 0)) * dt
	b.with += float64(with) * dt
	b.without += float64(without) * dt
	b.seconds += dt
	if prev.ArrivalRate != nil && *prev.ArrivalRate >= 0 {
		b.messages += *prev.ArrivalRate * dt
	}
	cut := minute - int64(billWindow/time.Minute)
	drop := 0
	for drop < len(m.minutes) && m.minutes[drop].minute <= cut {
		drop++
	}
	if drop > 0 {
		m.minutes = m.minutes[:copy(m.minutes, m.minutes[drop:])]
	}
}

// Bill is a group's fleet in dollars, for views. With no price
// (Priced false) every dollar figure is 0 and only the worker-hours say
// anything.
type Bill struct {
	Priced            bool    `json:"priced"`
	WorkerCostPerHour float64 `json:"worker_cost_per_hour"`
	// Workers and DollarsPerHour are the fleet now: current workers and
	// what they cost an hour.
	Workers        int     `json:"workers"`
	DollarsPerHour float64 `json:"dollars_per_hour"`
	// BilledSeconds is how much of the last day the figures cover (less
	// than a day after a start).
	BilledSeconds float64 `json:"billed_seconds"`
	WorkerHours   float64 `json:"worker_hours"`
	Dollars       float64 `json:"dollars"` // over BilledSeconds
	// Messages is the messages served meanwhile, as the arrival estimate
	// counts them; PerMillionMessages the dollars per million of them
	// (nil without a price or messages).
	Messages           float64  `json:"messages"`
	PerMillionMessages *float64 `json:"dollars_per_million_messages"`
	// SizedWithForecast and SizedWithoutForecast are the rule's asks,
	// within the bounds, in dollars over BilledSeconds; ForecastSaving is
	// without − with: negative when the forecast cost money.
	SizedWithForecastDollars    float64 `json:"sized_with_forecast_dollars"`
	SizedWithoutForecastDollars float64 `json:"sized_without_forecast_dollars"`
	ForecastSavingDollars       float64 `json:"forecast_saving_dollars"`
	ForecastSavingWorkerHours   float64 `json:"forecast_saving_worker_hours"`
}

// bill sums the meter for a group priced at price dollars a worker-hour.
func (m *meter) bill(price float64, current int) Bill {
	b := Bill{Priced: price > 0, WorkerCostPerHour: price, Workers: current}
	var fleet, with, without float64
	for _, x := range m.minutes {
		fleet += x.fleet
		with += x.with
		without += x.without
		b.Messages += x.messages
		b.BilledSeconds += x.seconds
	}
	b.WorkerHours = fleet / 3600
	b.ForecastSavingWorkerHours = (without - with) / 3600
	if !b.Priced {
		return b
	}
	b.DollarsPerHour = capacity.WorkerDollarsPerHour(current, price)
	b.Dollars = b.WorkerHours * price
	b.SizedWithForecastDollars = with / 3600 * price
	b.SizedWithoutForecastDollars = without / 3600 * price
	b.ForecastSavingDollars = b.SizedWithoutForecastDollars - b.SizedWithForecastDollars
	if b.Messages > 0 {
		per := b.Dollars / b.Messages * 1e6
		b.PerMillionMessages = &per
	}
	return b
}
