// Package sqsurl reads what an SQS queue URL says about its queue: the
// region and the queue name.
package sqsurl

import (
	"fmt"
	"net/url"
	"strings"
)

// Parse returns the queue name and, when the host names one, the region of
// an SQS queue URL. It understands https://sqs.<region>.amazonaws.com/<account>/<name>
// (and amazonaws.com.cn), the legacy https://<region>.queue.amazonaws.com/<account>/<name>,
// and any other host (emulators, VPC endpoints), for which the region is "".
func Parse(raw string) (name, region string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("parse queue URL %q: %w", raw, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", "", fmt.Errorf("queue URL %q: scheme must be https or http", raw)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("queue URL %q has no host", raw)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("queue URL %q: path must be /<account>/<queue name>", raw)
	}
	name = parts[1]
	host := strings.ToLower(u.Hostname())
	labels := strings.Split(host, ".")
	switch {
	case len(labels) >= 4 && labels[0] == "sqs" && labels[2] == "amazonaws":
		region = labels[1] // sqs.<region>.amazonaws.com[.cn]
	case len(labels) >= 4 && labels[1] == "queue" && labels[2] == "amazonaws":
		region = labels[0] // <region>.queue.amazonaws.com
	}
	return name, region, nil
}
