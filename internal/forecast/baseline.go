package forecast

import (
	"math"
)

// Hot minutes: each minute against the baseline of the minutes before it.

// mark sets minute m's hot and onset bits from its rate. The first minute
// with a baseline also marks the minutes before it, which had none, against
// that baseline: load that starts high (a burst at start) is a burst too.
func (f *Forecaster) mark(m int64) {
	b, ok := f.baseline(m)
	if ok && !f.baselined {
		f.baselined = true
		for g := max(f.first, m-baselineReach); g < m; g++ {
			if f.known(g) {
				f.markWith(g, b, true)
			}
		}
	}
	f.markWith(m, b, ok)
}

// markWith marks minute m against the baseline b, when ok.
func (f *Forecaster) markWith(m int64, b float64, ok bool) {
	i := f.idx(m)
	v := whole(f.rates[i])
	hot := !math.IsNaN(v) && ok && hotOver(v, b, f.isHot(m-1))
	setBit(f.hot, i, hot)
	setBit(f.onset, i, hot && !f.isHot(m-1))
	if m < f.last {
		n := f.idx(m + 1)
		setBit(f.onset, n, getBit(f.hot, n) && !hot)
	}
}

// recentMean is the mean arrival rate, msg/s, of the known minutes among
// the last n closed ones; false when fewer than half of them are known.
func (f *Forecaster) recentMean(n int64) (float64, bool) {
	if !f.have {
		return 0, false
	}
	sum, known := 0.0, int64(0)
	for g := f.last - n + 1; g <= f.last; g++ {
		if v := f.rate(g); !math.IsNaN(v) {
			sum += v
			known++
		}
	}
	if 2*known < n {
		return 0, false
	}
	return sum / float64(known), true
}

// stillHot reports whether arrivals of v msg/s now would carry on a hot run:
// whether they stand above the baseline by the share and noise a run goes on
// at (see mark).
func (f *Forecaster) stillHot(v float64) bool {
	if !f.baseOK || math.IsNaN(v) {
		return true
	}
	return hotOver(v, f.base, true)
}

// hotOver reports whether a rate v stands hot above the baseline b: by
// hotRatio and by hotSigmas of Poisson counting noise (at least
// hotMessages) over a minute; a run already going on (continuing) needs
// half that excess, so that noise within a surge does not cut it in pieces.
func hotOver(v, b float64, continuing bool) bool {
	ratio, excess := hotRatio, math.Max(hotSigmas*math.Sqrt(60*b), hotMessages)
	if continuing {
		ratio, excess = 1+(hotRatio-1)/2, excess/2
	}
	return v >= ratio*b && 60*(v-b) >= excess
}

// baseline is the median of the known, not hot minutes shortly before m.
func (f *Forecaster) baseline(m int64) (float64, bool) {
	var buf [baselineMinutes]float32
	n := 0
	for g := m - 1; g >= m-baselineReach && n < baselineMinutes; g-- {
		if !f.known(g) {
			if g < f.first {
				break
			}
			continue
		}
		i := f.idx(g)
		v := float32(whole(f.rates[i]))
		if v != v || getBit(f.hot, i) {
			continue
		}
		// insertion sort
		j := n
		for j > 0 && buf[j-1] > v {
			buf[j] = buf[j-1]
			j--
		}
		buf[j] = v
		n++
	}
	if n < minBaseline {
		return 0, false
	}
	if n%2 == 1 {
		return float64(buf[n/2]), true
	}
	return (float64(buf[n/2-1]) + float64(buf[n/2])) / 2, true
}

// run is the length and the peak rate of the hot run starting at onset o.
func (f *Forecaster) run(o int64) (length int64, peak float64) {
	for g := o; g < o+maxRun && f.isHot(g); g++ {
		length++
		if v := f.rate(g); v > peak {
			peak = v
		}
	}
	return length, peak
}

// onsetNear returns the onset within ±j of m closest to it.
func (f *Forecaster) onsetNear(m, j int64) (int64, bool) {
	for d := int64(0); d <= j; d++ {
		if f.isOnset(m - d) {
			return m - d, true
		}
		if d > 0 && f.isOnset(m+d) {
			return m + d, true
		}
	}
	return 0, false
}
