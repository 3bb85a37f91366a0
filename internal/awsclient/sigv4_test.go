package awsclient

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// TestRequestSignerMatchesTheSDK signs the same requests with the direct
// caller's signer and the SDK's, at several times, endpoints and
// credentials, and wants the same Authorization, X-Amz-Date and
// X-Amz-Security-Token from both.
func TestRequestSignerMatchesTheSDK(t *testing.T) {
	endpoints := []string{
		"https://sqs.us-east-1.amazonaws.com/",
		"https://sqs.us-east-1.amazonaws.com",
		"https://sqs.eu-west-1.amazonaws.com:443/",
		"http://127.0.0.1:5000/",
		"http://localhost:80/",
		"https://[::1]:4566/",
		"https://proxy.internal/sqs/v1/",
	}
	creds := []aws.Credentials{
		{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
		{AccessKeyID: "ASIAEXAMPLE", SecretAccessKey: "secret", SessionToken: "FwoGZXIvYXdzEJr//////////wEaDM token  with   spaces "},
	}
	times := []time.Time{
		time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 2, 23, 59, 59, 999e6, time.UTC),
		time.Date(2027, 1, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600)),
	}
	bodies := []string{
		`{"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/orders","AttributeNames":["ApproximateNumberOfMessages"]}`,
		`{"QueueUrl":"https://sqs.eu-west-1.amazonaws.com/1/q\u00e9"}`,
	}
	sdk := v4.NewSigner()
	for _, ep := range endpoints {
		for _, region := range []string{"us-east-1", "ap-southeast-2"} {
			s, ok := newRequestSigner(ep, region, sqsSigningName)
			if !ok {
				t.Fatalf("%s: not signable", ep)
			}
			for _, c := range creds {
				for _, at := range times {
					for _, body := range bodies {
						sum := sha256.Sum256([]byte(body))
						hash := hex.EncodeToString(sum[:])
						// Twice: the second signature uses the kept key.
						for range 2 {
							got := s.sign(c, directRequest, len(body), []byte(hash), at)
							req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, ep, bytes.NewReader([]byte(body)))
							if err != nil {
								t.Fatal(err)
							}
							o := outgoing{sig: got, userAgent: "queue-checker/test"}
							o.each(func(k, v string) {
								if k != "Authorization" && k != "X-Amz-Date" && k != "X-Amz-Security-Token" {
									req.Header.Set(k, v)
								}
							})
							if err := sdk.SignHTTP(context.Background(), c, req, hash, sqsSigningName, region, at); err != nil {
								t.Fatal(err)
							}
							if want := req.Header.Get("Authorization"); got.authorization != want {
								t.Errorf("%s %s token %t at %s:\n got %s\nwant %s", ep, region, c.SessionToken != "", at, got.authorization, want)
							}
							if want := req.Header.Get("X-Amz-Date"); got.amzDate != want {
								t.Errorf("X-Amz-Date %s, want %s", got.amzDate, want)
							}
							if want := req.Header.Get("X-Amz-Security-Token"); got.securityToken != want {
								t.Errorf("X-Amz-Security-Token %q, want %q", got.securityToken, want)
							}
							if want := cmp.Or(req.Host, req.URL.Host); got.host != want {
								t.Errorf("%s: Host %s, the SDK signs %s", ep, got.host, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestRequestSignerLeavesEscapingToTheSDK: an endpoint path that needs
// escaping is left to the SDK's signer.
func TestRequestSignerLeavesEscapingToTheSDK(t *testing.T) {
	for _, ep := range []string{"https://h/a%20b/", "https://h/a:b/", "https://h/?x=1", "://", "https://[::1]:443/"} {
		if _, ok := newRequestSigner(ep, "us-east-1", "sqs"); ok {
			t.Errorf("%s: signed without the SDK", ep)
		}
	}
}

func BenchmarkRequestSigner(b *testing.B) {
	s, _ := newRequestSigner("https://sqs.us-east-1.amazonaws.com/", "us-east-1", sqsSigningName)
	c := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}
	body := `{"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/orders"}`
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		s.sign(c, directRequest, len(body), []byte(hash), at)
	}
}
