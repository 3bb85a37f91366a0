package awstest

import (
	"net/http"
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestSharedServerAnswers(t *testing.T) {
	m := Shared(t)
	resp, err := http.Get(m.URL + "/moto-api/")
	if err != nil {
		t.Fatalf("GET %s: %v", m.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/moto-api/: status %d, want 200", m.URL, resp.StatusCode)
	}
	if Shared(t) != m {
		t.Fatal("Shared started a second server")
	}
}
