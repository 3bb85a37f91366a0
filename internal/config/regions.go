package config

import (
	"fmt"
	"regexp"
)

// partitionRegions are the region patterns of the AWS partitions, as the
// SDK's endpoint rules define them (aws-sdk-go-v2
// internal/endpoints/awsrulesfn/partitions.go, v1.48.0): a region outside
// every one of them is a typing error, not a region the SDK can reach.
var partitionRegions = []*regexp.Regexp{
	regexp.MustCompile(`^(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+$`), // aws
	regexp.MustCompile(`^cn-\w+-\d+$`),                           // aws-cn
	regexp.MustCompile(`^us-gov-\w+-\d+$`),                       // aws-us-gov
	regexp.MustCompile(`^us-iso-\w+-\d+$`),                       // aws-iso
	regexp.MustCompile(`^us-isob-\w+-\d+$`),                      // aws-iso-b
	regexp.MustCompile(`^eu-isoe-\w+-\d+$`),                      // aws-iso-e
	regexp.MustCompile(`^us-isof-\w+-\d+$`),                      // aws-iso-f
	regexp.MustCompile(`^eusc-(de)-\w+-\d+$`),                    // aws-eusc
}

// knownRegions are the regions the same file lists, for the hint of a
// region that is not one.
var knownRegions = []string{
	"af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
	"ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
	"ap-southeast-5", "ap-southeast-6", "ap-southeast-7", "ca-central-1", "ca-west-1",
	"eu-central-1", "eu-central-2", "eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2",
	"eu-west-3", "il-central-1", "me-central-1", "me-south-1", "me-west-1", "mx-central-1",
	"sa-east-1", "sa-west-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2",
	"cn-north-1", "cn-northwest-1", "eusc-de-east-1", "us-iso-east-1", "us-iso-west-1",
	"us-isob-east-1", "us-isob-west-1", "eu-isoe-west-1", "us-isof-east-1", "us-isof-south-1",
	"us-gov-east-1", "us-gov-west-1",
}

// regionProblem says why region is not an AWS region, with the nearest
// known one as a hint; "" when it is one.
func regionProblem(region string) string {
	for _, re := range partitionRegions {
		if re.MatchString(region) {
			return ""
		}
	}
	msg := fmt.Sprintf("%q is not a region of any AWS partition", region)
	best, bestD := "", 3 // suggest within two edits
	for _, k := range knownRegions {
		if d := editDistance(region, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		msg += "; did you mean " + best + "?"
	}
	return msg
}
