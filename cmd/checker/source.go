package main

import (
	"context"
	"crypto/sha256"
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
	return ssm.NewFromConfig(cfg), nil
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
	return cfg, sum, err
}
