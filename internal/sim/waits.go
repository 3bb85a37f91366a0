package sim

import (
	"math"
	"math/bits"
)

// waitStats summarises queue waits (seconds) in bounded memory: exact count,
// sum, maximum and count within the target, and a log-linear histogram for
// quantiles. Waits below 1,024 µs fall in exact 1 µs buckets; above, each
// power of two is split into 512 buckets, so a quantile is within 0.2 % of
// the true value (read at the middle of its bucket).
type waitStats struct {
	target float64
	n      int64
	within int64
	sum    float64
	max    float64
	counts []int64
}

const (
	histLinear = 1024 // exact 1 µs buckets below this many microseconds
	histSub    = 512  // buckets per power of two above
	histShift  = 9    // log2(histSub)
)

func histIndex(w float64) int {
	v := uint64(0)
	if us := w * 1e6; us > 0 {
		if us >= float64(math.MaxInt64) {
			v = math.MaxInt64
		} else {
			v = uint64(us)
		}
	}
	if v < histLinear {
		return int(v)
	}
	e := bits.Len64(v) - histShift - 1 // v >> e is in [512, 1024)
	return histLinear + (e-1)*histSub + int(v>>e) - histSub
}

// histValue is the middle of bucket i, in seconds.
func histValue(i int) float64 {
	if i < histLinear {
		return float64(i) * 1e-6
	}
	e := (i-histLinear)/histSub + 1
	sub := (i-histLinear)%histSub + histSub
	lo := float64(uint64(sub) << e)
	return (lo + float64(uint64(1)<<e)/2) * 1e-6
}

func (s *waitStats) add(w float64) {
	if w < 0 {
		w = 0
	}
	s.n++
	s.sum += w
	s.max = math.Max(s.max, w)
	if w <= s.target {
		s.within++
	}
	i := histIndex(w)
	if i >= len(s.counts) {
		s.counts = append(s.counts, make([]int64, i+1-len(s.counts))...)
	}
	s.counts[i]++
}

func (s *waitStats) clone() waitStats {
	c := *s
	c.counts = append([]int64(nil), s.counts...)
	return c
}

// quantile is the nearest-rank q-quantile: the smallest wait such that at
// least q of all waits are at or below it. 0 when there are none.
func (s *waitStats) quantile(q float64) float64 {
	if s.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(s.n)))
	rank = max(rank, 1)
	var seen int64
	for i, c := range s.counts {
		seen += c
		if seen >= rank {
			return math.Min(histValue(i), s.max)
		}
	}
	return s.max
}
