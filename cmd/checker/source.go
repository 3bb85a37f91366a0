package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/queuechecker/queue-checker/internal/config"
)

// envConfig names the configuration when --config is not given.
const envConfig = "CHECKER_CONFIG"

// ssmPrefix marks a configuration stored in SSM Parameter Store:
// ssm:/queue-checker/config, or ssm:arn:aws:ssm:REGION:ACCOUNT:parameter/NAME.
const ssmPrefix = "ssm:"

// ssmAPI is the part of SSM the configuration source calls.
type ssmAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

var _ ssmAPI = (*ssm.Client)(nil)

// configSource is where the configuration comes from: a file, or an SSM
// parameter read with the SDK's default chain (credentials, AWS_REGION,
// AWS_ENDPOINT_URL_SSM). It is read at start, on SIGHUP and, with
// --config-refresh, every refresh period.
type configSource struct {
	name  string // as given, for messages: a path or ssm:NAME
	param string // the parameter's name or ARN; "" for a file
	api   ssmAPI // made on first use
}

// sourceFlag returns the --config value, or CHECKER_CONFIG when the flag is
// empty; a usage error when neither names one.
func sourceFlag(flagValue string) (*configSource, error) {
	name := flagValue
	if name == "" {
		name = os.Getenv(envConfig)
	}
	if name == "" {
		return nil, usageErr("--config is required (a file, or ssm:/parameter/name), or set %s", envConfig)
	}
	src := &configSource{name: name}
	if rest, ok := strings.CutPrefix(name, ssmPrefix); ok {
		if rest == "" || strings.ContainsAny(rest, " \t\n") {
			return nil, usageErr("--config %q: want ssm:/parameter/name or ssm:arn:aws:ssm:REGION:ACCOUNT:parameter/NAME", name)
		}
		src.param = rest
		if region := arnRegion(rest); region != "" {
			if msg := config.RegionProblem(region); msg != "" {
				return nil, usageErr("--config %q: the region of the ARN: %s", name, msg)
			}
		}
	}
	return src, nil
}

// read returns the configuration document's bytes.
func (s *configSource) read(ctx context.Context) ([]byte, error) {
	if s.param == "" {
		data, err := os.ReadFile(s.name)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		return data, nil
	}
	if s.api == nil {
		api, err := newSSM(ctx, s.param)
		if err != nil {
			return nil, err
		}
		s.api = api
	}
	out, err := s.api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(s.param), WithDecryption: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read config from SSM parameter %s: %w", s.param, err)
	}
	if out.Parameter == nil || out.Parameter.Value == nil {
		return nil, fmt.Errorf("read config from SSM parameter %s: no value", s.param)
	}
	return []byte(*out.Parameter.Value), nil
}

// newSSM makes an SSM client from the SDK's default chain; the region of
// a parameter ARN wins over the default region.
func newSSM(ctx context.Context, param string) (*ssm.Client, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if region := arnRegion(param); region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration for SSM: %w", err)
	}
	if len(opts) == 0 && cfg.Region != "" {
		if msg := config.RegionProblem(cfg.Region); msg != "" {
			return nil, fmt.Errorf("read config from SSM parameter %s: the SDK's region from %s: %s", param, regionSource(), msg)
		}
	}
	return ssm.NewFromConfig(cfg), nil
}

// sdkRegion is the region the SDK's default chain resolves (AWS_REGION,
// AWS_DEFAULT_REGION, the shared config profile; no call is made), and
// where it comes from.
func sdkRegion(ctx context.Context) (region, from string, err error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return "", "", fmt.Errorf("load the AWS SDK's configuration: %w", err)
	}
	return cfg.Region, regionSource(), nil
}

// regionSource names where the SDK's default chain takes its region from.
func regionSource() string {
	for _, env := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if os.Getenv(env) != "" {
			return env
		}
	}
	return fmt.Sprintf("the shared config profile %q", cmp.Or(os.Getenv("AWS_PROFILE"), "default"))
}

// arnRegion is the region of arn:PARTITION:ssm:REGION:ACCOUNT:parameter/...,
// or "".
func arnRegion(s string) string {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) == 6 && parts[0] == "arn" && parts[2] == "ssm" {
		return parts[3]
	}
	return ""
}

// load reads and validates the configuration, and returns the digest of the
// document with it, to tell a changed document from the same one read again.
// Problems are config FieldErrors, as from config.Load.
func (s *configSource) load(ctx context.Context) (config.Config, [32]byte, error) {
	data, err := s.read(ctx)
	if err != nil {
		return config.Config{}, [32]byte{}, err
	}
	sum := sha256.Sum256(data)
	cfg, err := config.Parse(data)
	if err != nil && config.Problems(err) == nil {
		return config.Config{}, sum, fmt.Errorf("parse config %s: %w", s.name, err)
	}
	// What takes the SDK's region is checked against it, as aws.region
	// would be: a typing error in AWS_REGION would otherwise pass and fail
	// every call.
	if rerr := cfg.CheckSDKRegion(func() (string, string, error) { return sdkRegion(ctx) }); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return cfg, sum, err
}
