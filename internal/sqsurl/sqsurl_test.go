package sqsurl

import "testing"

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, wantName, wantRegion string
		wantErr                         bool
	}{
		{"regional", "https://sqs.us-east-1.amazonaws.com/123456789012/thumbnails", "thumbnails", "us-east-1", false},
		{"china", "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q", "q", "cn-north-1", false},
		{"legacy", "https://eu-west-1.queue.amazonaws.com/123456789012/jobs.fifo", "jobs.fifo", "eu-west-1", false},
		{"emulator", "http://127.0.0.1:5000/123456789012/jobs", "jobs", "", false},
		{"vpc endpoint", "https://vpce-1a2b.sqs.us-east-1.vpce.amazonaws.com/123456789012/jobs", "jobs", "", false},
		{"no path", "https://sqs.us-east-1.amazonaws.com/", "", "", true},
		{"no account", "https://sqs.us-east-1.amazonaws.com/jobs", "", "", true},
		{"not a url", "://nope", "", "", true},
		{"no scheme", "sqs.us-east-1.amazonaws.com/1/q", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name, region, err := Parse(tt.url)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse(%q) error = %v, want error %v", tt.url, err, tt.wantErr)
			}
			if name != tt.wantName || region != tt.wantRegion {
				t.Fatalf("Parse(%q) = %q, %q; want %q, %q", tt.url, name, region, tt.wantName, tt.wantRegion)
			}
		})
	}
}
