package config

import (
	"fmt"
	"slices"
)

//go:generate go run ./internal/genregions

// regionProblem says why region is not an AWS region, with the nearest
// known one as a hint; "" when it is one. The regions are those of the
// SDK's endpoint rules (regions_sdk.go, generated from the SDK the build
// uses): a region outside them, us-esat-1 or eu-west-4, is a typing error
// or a region this build's SDK does not know yet, and either way not one to
// start on.
func regionProblem(region string) string {
	if _, ok := sdkRegions[region]; ok {
		return ""
	}
	msg := fmt.Sprintf("%q is not a region of any AWS partition", region)
	names := make([]string, 0, len(sdkRegions))
	for k := range sdkRegions {
		names = append(names, k)
	}
	slices.Sort(names)
	best, bestD := "", 3 // suggest within two edits
	if len(region) <= 64 {
		for _, k := range names {
			if d := editDistance(region, k); d < bestD {
				best, bestD = k, d
			}
		}
	}
	if best != "" {
		msg += "; did you mean " + best + "?"
	}
	return msg
}
