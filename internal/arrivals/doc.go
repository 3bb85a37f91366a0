// Package arrivals measures what a group's queues receive and how fast its
// workers start: the arrival estimator (an EWMA of the observed arrivals,
// with its dump bound, the saturated surge and the exact arrivals of the
// deleted count's minute), the trend of that estimate while it climbs, and
// the start delays measured from the fleet. It takes plain values and the
// time as an argument; the policy calls it and reads its results through
// its methods.
package arrivals
