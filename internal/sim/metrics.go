package sim

import (
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// The CloudWatch metrics of a sample, as the checker's poller reads them
// (internal/poller/cloudwatch.go). SQS publishes NumberOfMessagesDeleted and
// ApproximateAgeOfOldestMessage as 1-minute datapoints, each stamped with
// the start of its minute and readable only a while after the minute ends.
// The poller asks CloudWatch at most once a minute for the Sum of deletions
// (which it turns into msg/s) and the Maximum of the oldest age over the
// last few minutes, keeps the newest datapoint found, and repeats it on
// every sample until its next read.
const (
	// metricPeriod is the datapoints' period, in seconds.
	metricPeriod = 60.0
	// metricRefresh is how often the poller reads CloudWatch, in seconds.
	metricRefresh = 60.0
	// metricLookBack is how many minutes back the poller looks for
	// datapoints, before the minute under way (its cwWindow).
	metricLookBack = 10
)

// datapoint is one minute's metrics.
type datapoint struct {
	minute  int64   // since minuteMetrics.base
	deleted float64 // completions within the minute ÷ 60, msg/s
	age     float64 // the highest age of the oldest message within it
}

// minuteMetrics aggregates a world's completions and oldest ages per
// minute, publishes each minute a delay after it ends, and reads them as
// the poller does. Minutes are whole minutes of the clock, as CloudWatch's
// are, whatever the world's start.
type minuteMetrics struct {
	base  time.Time // the minute boundary at or before the world's start
	off   float64   // seconds from base to the world's start
	delay float64   // seconds from a minute's end to when it can be read

	minute  int64   // the minute being filled
	end     float64 // its end, seconds since the world's start
	deleted int64   // completions within it so far
	age     float64 // the highest oldest age within it so far

	// closed are ended minutes, oldest first: at most one already
	// published (the newest that is), then those not yet published.
	closed []datapoint

	read    bool    // whether the poller has read yet
	readAt  float64 // when it last read
	have    bool    // whether that read found a datapoint
	reading datapoint
}

func newMinuteMetrics(start time.Time, delay time.Duration) minuteMetrics {
	base := start.Truncate(time.Minute)
	m := minuteMetrics{base: base, off: start.Sub(base).Seconds(), delay: delay.Seconds()}
	m.end = metricPeriod - m.off
	return m
}

// published is when minute k can be read, seconds since the world's start.
func (m *minuteMetrics) published(k int64) float64 {
	return float64(k+1)*metricPeriod - m.off + m.delay
}

// noteAge raises the minute's highest oldest age to age.
func (m *minuteMetrics) noteAge(age float64) {
	m.age = math.Max(m.age, age)
}

// close ends every minute that ends at or before t; oldest is the arrival
// time of the oldest waiting message (NaN when none waits), unchanged since
// those minutes ended, whose age at each minute's end the minute's maximum
// includes.
func (m *minuteMetrics) close(t, oldest float64) {
	for m.end <= t {
		if !math.IsNaN(oldest) {
			m.noteAge(m.end - oldest)
		}
		m.closed = append(m.closed, datapoint{minute: m.minute, deleted: float64(m.deleted) / metricPeriod, age: m.age})
		m.minute++
		m.end += metricPeriod
		m.deleted, m.age = 0, 0
		m.prune(t)
	}
}

// prune drops the minutes that a minute published by t supersedes: no read
// from t on can return them. It keeps the memory bounded when nobody reads.
func (m *minuteMetrics) prune(t float64) {
	drop := 0
	for drop+1 < len(m.closed) && m.published(m.closed[drop+1].minute) <= t {
		drop++
	}
	if drop > 0 {
		m.closed = m.closed[:copy(m.closed, m.closed[drop:])]
	}
}

// sample is what the poller holds at t: it reads CloudWatch when a minute
// has passed since its last read (or it never read), finding the newest
// minute published by then within its look-back, and otherwise repeats
// what it found last. It returns false while it holds nothing.
func (m *minuteMetrics) sample(t float64) (datapoint, bool) {
	if !m.read || t-m.readAt >= metricRefresh {
		m.read, m.readAt = true, t
		m.prune(t)
		current := int64(math.Floor((t + m.off) / metricPeriod))
		m.have = len(m.closed) > 0 && m.published(m.closed[0].minute) <= t && m.closed[0].minute >= current-metricLookBack
		if m.have {
			m.reading = m.closed[0]
		}
	}
	return m.reading, m.have
}

// at is the start of minute k, CloudWatch's time stamp of its datapoint.
func (m *minuteMetrics) at(k int64) time.Time {
	return m.base.Add(time.Duration(k) * time.Minute)
}

// readings are the sample's Deleted and (with oldest) OldestAge readings at
// t; nil while the poller holds no datapoint.
func (m *minuteMetrics) readings(t float64, oldest bool) (deleted, age *model.Reading) {
	dp, ok := m.sample(t)
	if !ok {
		return nil, nil
	}
	at := m.at(dp.minute)
	deleted = &model.Reading{Value: dp.deleted, At: at}
	if oldest {
		age = &model.Reading{Value: dp.age, At: at}
	}
	return deleted, age
}

// peek is the newest minute published by t within the look-back, as a read
// at t would find it, without reading: the poller's own reads (sample)
// are not moved.
func (m *minuteMetrics) peek(t float64) (datapoint, bool) {
	var dp datapoint
	ok := false
	for _, c := range m.closed {
		if m.published(c.minute) > t {
			break
		}
		dp, ok = c, true
	}
	current := int64(math.Floor((t + m.off) / metricPeriod))
	return dp, ok && dp.minute >= current-metricLookBack
}
