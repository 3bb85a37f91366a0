package sim

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
)

// loggedMinute is one CloudWatch minute of the world's queue.
type loggedMinute struct {
	sent, deleted uint32 // messages sent to the queue, and deleted, within the minute
	// inFlight is the time integral of the in-flight count over the
	// minute, message-seconds: ÷ 60 it is the minute's average.
	inFlight float64
}

// minuteLog keeps, for every minute of the clock since the world's start
// (the minutes of minuteMetrics), what SQS publishes to CloudWatch as
// NumberOfMessagesSent, NumberOfMessagesDeleted and the average of
// ApproximateNumberOfMessagesNotVisible: the history a restarted checker
// reads (World.History). It costs an increment per message sent and per
// message deleted, an addition per change of the in-flight count, and 16
// bytes a minute.
//
// The in-flight integral of the minute being filled is kept as if the
// count held to the minute's end: it starts at the count × 60, and each
// change at t adds or takes off end − t, so it is exact whenever the
// minute closes.
type minuteLog struct {
	end    float64        // end of the minute being filled, seconds since the world's start
	cur    loggedMinute   // the minute being filled
	closed []loggedMinute // ended minutes: closed[k] is minute k
}

func newMinuteLog(m *minuteMetrics) minuteLog {
	return minuteLog{end: metricPeriod - m.off}
}

// received notes a message taken into flight at t.
func (l *minuteLog) received(t float64) { l.cur.inFlight += l.end - t }

// deleted notes a message deleted at t.
func (l *minuteLog) deleted(t float64) {
	l.cur.deleted++
	l.cur.inFlight -= l.end - t
}

// returned notes a message back in the queue at t, not deleted: its
// visibility timeout ended.
func (l *minuteLog) returned(t float64) { l.cur.inFlight -= l.end - t }

// close ends every minute that ends at or before t, inFlight messages
// being in flight since the last change.
func (l *minuteLog) close(t float64, inFlight int) {
	for l.end <= t {
		l.closed = append(l.closed, l.cur)
		l.cur = loggedMinute{inFlight: float64(inFlight) * metricPeriod}
		l.end += metricPeriod
	}
}

// weeklyPeriod is the period of the weekly arrival history, as the
// poller reads it (HistoryRequest.WeeklyFrom).
const weeklyPeriod = 5 * time.Minute

// History is the CloudWatch history of the world's queue that a checker
// starting at now reads for its warm start (cmd/checker's warmStart, with
// the poller's History), as of now, with the world advanced to now:
//
//   - arrivals: the messages sent in each minute of the last span before
//     the start of now's minute, and, when span > 0 and weeks is set (a
//     group keeps a forecast: controller.ReadsWeeks), the messages sent in
//     each five minutes of the weeks before (forecast.CoarseSpan back
//     from now's minute, up to the minutes), in Weekly;
//   - fleet: each minute's deletions, msg/s (its count ÷ 60), and average
//     in-flight count, over the measure.PreloadSpan before the start of
//     now's minute.
//
// Only whole minutes of the clock count, and none before the world's
// start (a first minute the start cuts is left out, as are five minutes
// it cuts), so every value is known: neither series holds a NaN. Like
// the sample's readings (minuteMetrics), a minute is published
// Config.MetricDelay after it ends: the minutes not yet published at now,
// which CloudWatch would not have either, are left out, so the series
// may end a minute or more before now's minute (the daemon's history has
// NaN there instead, minutes the forecast and the measurement take as
// unknown). An empty series has a zero Start. A minute's in-flight average is the exact time average, where
// CloudWatch's averages SQS's reports of about one a minute: the world's
// minutes are less noisy than a real queue's.
func (w *World) History(now time.Time, span time.Duration, weeks bool) (model.MinuteHistory, model.FleetHistory) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.seconds(now)
	w.advance(t)

	m, ml := &w.minutes, &w.log
	end := now.UTC().Truncate(time.Minute)
	index := func(at time.Time) int64 {
		d := at.Sub(m.base)
		if d < 0 {
			return -1
		}
		return int64(d / time.Minute)
	}
	first := int64(0) // the first whole minute
	if m.off > 0 {
		first = 1
	}
	// [first, to): the whole minutes published by now that end by now's
	// minute.
	to := min(index(end), int64(len(ml.closed)))
	for to > first && m.published(to-1) > t {
		to--
	}

	var arrivals model.MinuteHistory
	if span > 0 {
		from := end.Add(-span).Truncate(time.Minute)
		if k := max(index(from), first); k < to {
			arrivals.Start = m.at(k).UTC()
			arrivals.Counts = make([]float64, 0, to-k)
			for _, lm := range ml.closed[k:to] {
				arrivals.Counts = append(arrivals.Counts, float64(lm.sent))
			}
		}
		if weeks {
			arrivals.WeeklyStart, arrivals.Weekly = w.weekly(end.Add(-forecast.CoarseSpan), from, first, to)
		}
	}

	var fleet model.FleetHistory
	if k := max(index(end.Add(-measure.PreloadSpan)), first); k < to {
		fleet.Start = m.at(k).UTC()
		fleet.Deleted = make([]float64, 0, to-k)
		fleet.InFlight = make([]float64, 0, to-k)
		for _, lm := range ml.closed[k:to] {
			fleet.Deleted = append(fleet.Deleted, float64(lm.deleted)/metricPeriod)
			fleet.InFlight = append(fleet.InFlight, lm.inFlight/metricPeriod)
		}
	}
	return arrivals, fleet
}

// weekly sums the messages sent in each five minutes of the clock from
// from to until (both truncated to five minutes) that lie within the
// logged minutes [first, to); a zero time and nil when there are none.
func (w *World) weekly(from, until time.Time, first, to int64) (time.Time, []float64) {
	m, ml := &w.minutes, &w.log
	lo := from.Truncate(weeklyPeriod)
	if start := m.at(first); lo.Before(start) {
		// The first five minutes that start at or after the first minute.
		lo = start.Truncate(weeklyPeriod)
		if lo.Before(start) {
			lo = lo.Add(weeklyPeriod)
		}
	}
	hi := until.Truncate(weeklyPeriod)
	if last := m.at(to).Truncate(weeklyPeriod); last.Before(hi) {
		hi = last
	}
	if !lo.Before(hi) {
		return time.Time{}, nil
	}
	k := int64(lo.Sub(m.base) / time.Minute)
	buckets := make([]float64, 0, int(hi.Sub(lo)/weeklyPeriod))
	for at := lo; at.Before(hi); at = at.Add(weeklyPeriod) {
		sum := 0.0
		for range weeklyPeriod / time.Minute {
			sum += float64(ml.closed[k].sent)
			k++
		}
		buckets = append(buckets, sum)
	}
	return lo.UTC(), buckets
}
