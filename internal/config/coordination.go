package config

import (
	"regexp"
	"time"
)

// Coordination shares the groups among several checkers through leases,
// in a DynamoDB table or as Kubernetes Leases (one of the two): each group
// is acted on by one checker at a time, and the others take its groups
// over when it stops. Absent: this checker acts on every group alone.
type Coordination struct {
	DynamoDB LeaseTable `yaml:"dynamodb"`
	// Kubernetes, when present, keeps the leases as coordination.k8s.io/v1
	// Leases in a namespace instead of a DynamoDB table.
	Kubernetes *LeaseNamespace `yaml:"kubernetes"`
	// LeaseDuration is how long a lease lasts unrenewed: how long the
	// groups of a checker that died wait for another. Default 3 × interval;
	// at least 2 × interval.
	LeaseDuration time.Duration `yaml:"lease_duration"`
	// Identity names this checker in the table; empty means the ECS
	// container's id from the environment, else hostname and process id.
	Identity string `yaml:"identity"`
}

// LeaseTable is the DynamoDB table of the leases.
type LeaseTable struct {
	Table  string `yaml:"table"`
	Region string `yaml:"region"` // empty: aws.region, else the SDK's default
}

// LeaseNamespace is the Kubernetes namespace of the Leases: the
// checker's own, where its Role lets it keep them.
type LeaseNamespace struct {
	Namespace string `yaml:"namespace"`
}

// DefaultLeaseIntervals is coordination.lease_duration, in intervals, when
// the key is absent or 0.
const DefaultLeaseIntervals = 3

// MinLeaseIntervals is the shortest lease, in intervals: a lease must
// outlive one renewal that fails.
const MinLeaseIntervals = 2

var (
	// tableNameRE is DynamoDB's rule for table names.
	tableNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)
	// identityRE keeps identities printable and short: a log field, a
	// label on the status page and part of an item key.
	identityRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$`)
)

// LeaseDurationFor returns c.LeaseDuration, or its default of 3 × interval
// when 0.
func (c Coordination) LeaseDurationFor(interval time.Duration) time.Duration {
	if c.LeaseDuration > 0 {
		return c.LeaseDuration
	}
	return DefaultLeaseIntervals * interval
}

func (c *Coordination) validate(p *problems, interval time.Duration) {
	if c == nil {
		return
	}
	if k := c.Kubernetes; k != nil {
		if c.DynamoDB != (LeaseTable{}) {
			p.add("coordination", "set one of dynamodb and kubernetes, not both: the leases live in one place")
		}
		switch ns := k.Namespace; {
		case ns == "":
			p.add("coordination.kubernetes.namespace", "required: the namespace of the Leases, the checker's own, such as queue-checker")
		case len(ns) > 63 || !dnsLabelRE.MatchString(ns):
			p.add("coordination.kubernetes.namespace", "must be a namespace name (at most 63 lower-case letters, digits and '-'), got %q", ns)
		}
	}
	switch t := c.DynamoDB.Table; {
	case c.Kubernetes != nil:
	case t == "":
		p.add("coordination.dynamodb.table", "required: the DynamoDB table of the leases, such as queue-checker-leases (or coordination.kubernetes for Leases)")
	case !tableNameRE.MatchString(t):
		p.add("coordination.dynamodb.table", "must be 3 to 255 letters, digits, '_', '-' or '.', got %q", t)
	}
	if c.Kubernetes == nil {
		validateRegion(p, "coordination.dynamodb.region", c.DynamoDB.Region)
	}
	if interval > 0 && c.LeaseDuration < MinLeaseIntervals*interval {
		p.add("coordination.lease_duration", "must be at least %d intervals (%s), got %s", MinLeaseIntervals, MinLeaseIntervals*interval, c.LeaseDuration)
	}
	if c.Identity != "" && !identityRE.MatchString(c.Identity) {
		p.add("coordination.identity", "must be 1 to 128 letters, digits and ._:@/+-, starting with a letter or digit; got %q", c.Identity)
	}
}
