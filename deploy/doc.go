// Package deploy holds no code. Beside it are the files that deploy the
// checker (container image, CloudFormation templates, ECS task, IAM policy,
// systemd unit, Grafana dashboard, Prometheus alerts); its tests parse every
// one of them and check them against the code: the IAM actions against the
// AWS calls the code makes, the dashboard's and alerts' metrics against the
// ones the daemon exports.
package deploy
