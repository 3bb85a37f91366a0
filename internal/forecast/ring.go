package forecast

import (
	"math"
	"math/bits"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// The ring of per-minute rates, each a 16-bit float, and its bitmaps.

// halfNaN is a NaN cut to its upper 16 bits.
const halfNaN = 0x7fc0

// half cuts v to the upper 16 bits of its float32, rounding to nearest.
func half(v float64) uint16 {
	if math.IsNaN(v) {
		return halfNaN
	}
	b := math.Float32bits(float32(v))
	if b&0x7f800000 != 0x7f800000 { // finite: round
		b += 0x7fff + (b>>16)&1
	}
	return uint16(b >> 16)
}

// whole widens a cut value back.
func whole(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

func minuteOf(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

func (f *Forecaster) idx(m int64) int64 {
	i := m % f.size
	if i < 0 {
		i += f.size
	}
	return i
}

// init sizes the ring for history, once; a different history resets it.
func (f *Forecaster) init(history time.Duration) {
	n := int64(history / time.Minute)
	if n < 2*minutesPerDay {
		n = max(n, maxPeriod*(periodLags+1)+60)
	}
	if f.size == n {
		return
	}
	*f = Forecaster{size: n}
	f.rates = make([]uint16, n)
	f.weeks.init()
	words := (n + 63) / 64
	bitsAll := make([]uint64, 3*words)
	f.hot, f.onset, f.explained = bitsAll[:words:words], bitsAll[words:2*words:2*words], bitsAll[2*words:]
	for i := range f.rates {
		f.rates[i] = halfNaN
	}
}

func getBit(b []uint64, i int64) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func setBit(b []uint64, i int64, v bool) {
	if v {
		b[i>>6] |= 1 << (uint(i) & 63)
	} else {
		b[i>>6] &^= 1 << (uint(i) & 63)
	}
}

// known reports whether minute m is inside the ring's span.
func (f *Forecaster) known(m int64) bool {
	return f.have && m <= f.last && m > f.last-f.size && m >= f.first
}

func (f *Forecaster) rate(m int64) float64 {
	if !f.known(m) {
		return math.NaN()
	}
	return whole(f.rates[f.idx(m)])
}

func (f *Forecaster) isHot(m int64) bool     { return f.known(m) && getBit(f.hot, f.idx(m)) }
func (f *Forecaster) isOnset(m int64) bool   { return f.known(m) && getBit(f.onset, f.idx(m)) }
func (f *Forecaster) isExplain(m int64) bool { return f.known(m) && getBit(f.explained, f.idx(m)) }

// add credits an observation of rate msg/s over [from, to) to the minutes it
// covers, closing the minutes it passes.
func (f *Forecaster) add(from, to time.Time, rate float64, horizon time.Duration) {
	if !(rate >= 0) || rate > maxRate || !to.After(from) {
		return
	}
	if to.Sub(from) > MaxObservation {
		f.advance(minuteOf(to), horizon)
		return
	}
	a, b := from.UnixNano(), to.UnixNano()
	for a < b {
		m := floorDiv(a, int64(time.Minute))
		end := min(b, (m+1)*int64(time.Minute))
		if f.curOK && m < f.cur {
			a = end // older than the minute being filled: too late
			continue
		}
		f.advance(m, horizon)
		secs := float64(end-a) / 1e9
		f.curSum += rate * secs
		f.curCov += secs
		a = end
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// advance makes m the minute being filled, closing the ones before it.
func (f *Forecaster) advance(m int64, horizon time.Duration) {
	switch {
	case !f.curOK && f.have && m > f.last && m-f.last <= f.size:
		// The first observation after a warm start: the minutes between
		// the history and it are unknown.
		for g := f.last + 1; g < m; g++ {
			f.close(g, math.NaN())
		}
		f.cur, f.curOK = m, true
		f.refresh(horizon)
		return
	case !f.curOK:
		f.cur, f.curOK = m, true
		return
	case m <= f.cur:
		return
	}
	v := math.NaN()
	switch {
	case f.exactOK:
		v = f.exact
	case f.curCov >= 20:
		v = f.curSum / f.curCov
	}
	f.exactOK = false
	if m-f.cur > f.size {
		// A jump past the whole history: nothing of it is left.
		f.reset()
		f.cur, f.curOK = m, true
		return
	}
	f.close(f.cur, v)
	for g := f.cur + 1; g < m; g++ {
		f.close(g, math.NaN())
	}
	f.cur, f.curSum, f.curCov = m, 0, 0
	f.refresh(horizon)
}

func (f *Forecaster) reset() {
	for i := range f.rates {
		f.rates[i] = halfNaN
	}
	clear(f.hot)
	clear(f.onset)
	clear(f.explained)
	f.have, f.curOK, f.curSum, f.curCov, f.nOcc, f.memExcess, f.memN, f.baselined, f.baseOK = false, false, 0, 0, 0, 0, 0, false, false
}

// close stores minute m's rate and marks it hot and onset.
func (f *Forecaster) close(m int64, v float64) {
	if f.have && m <= f.last {
		return
	}
	if !f.have {
		f.first = m
	}
	f.have, f.last = true, m
	i := f.idx(m)
	f.rates[i] = half(v)
	setBit(f.explained, i, false)
	f.mark(m)
	f.weeks.minute(m, v)
}

// set replaces the rate of a closed minute m with a better measurement of
// it, and marks it and the minute after it hot again.
func (f *Forecaster) set(m int64, v float64) {
	if !(v >= 0) || v > maxRate {
		return
	}
	if f.curOK && m == f.cur {
		f.exact, f.exactOK = v, true
		return
	}
	if !f.known(m) {
		return
	}
	f.rates[f.idx(m)] = half(v)
	for g := m; g <= min(m+1, f.last); g++ {
		f.mark(g)
	}
	f.base, f.baseOK = f.baseline(f.last + 1)
}

// preload fills minutes the forecaster does not know from h (warm start),
// and recomputes the hot minutes and the forecast.
func (f *Forecaster) preload(h model.MinuteHistory, horizon time.Duration) int {
	if len(h.Counts) == 0 || h.Start.IsZero() {
		return 0
	}
	start := minuteOf(h.Start)
	end := start + int64(len(h.Counts)) - 1
	if f.have {
		// Only what is older than the live minutes, and within the ring.
		end = min(end, f.first-1)
	}
	if f.curOK {
		end = min(end, f.cur-1)
	}
	top := end
	if f.have {
		top = f.last
	}
	lo := max(start, top-f.size+1)
	if lo > end {
		return 0
	}
	// Rebuild from lo: stored values, then the preloaded ones under them.
	vals := make([]float32, top-lo+1)
	for g := lo; g <= top; g++ {
		v := float32(math.NaN())
		if f.known(g) {
			v = float32(whole(f.rates[f.idx(g)]))
		}
		if g <= end && g-start < int64(len(h.Counts)) {
			if c := h.Counts[g-start]; c >= 0 && c/60 <= maxRate {
				v = float32(c / 60)
			}
		}
		vals[g-lo] = v
	}
	cur, curSum, curCov, curOK := f.cur, f.curSum, f.curCov, f.curOK
	f.reset()
	loaded := 0
	for g := lo; g <= top; g++ {
		if !math.IsNaN(float64(vals[g-lo])) && g <= end {
			loaded++
		}
		f.close(g, float64(vals[g-lo]))
	}
	f.cur, f.curSum, f.curCov, f.curOK = cur, curSum, curCov, curOK
	f.refresh(horizon)
	return loaded
}

// bitsSet counts the set bits of a bitset, for tests and memory accounting.
func bitsSet(b []uint64) int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
