package deploy

import (
	"os"
	"testing"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// TestMain stops the shared moto server after the tests that used it.
func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }
