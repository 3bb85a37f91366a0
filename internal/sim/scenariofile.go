package sim

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// LoadScenario is a built-in scenario by name (BuiltinSeeded with rate,
// duration and seed), or else the scenario file of that name (ParseCSV);
// a name that is neither a built-in scenario nor a .csv name nor an
// existing file is an error listing the built-in ones.
func LoadScenario(name string, rate float64, duration time.Duration, seed uint64) (Scenario, error) {
	if slices.Contains(BuiltinScenarios, name) {
		return BuiltinSeeded(name, rate, duration, seed)
	}
	if !strings.HasSuffix(strings.ToLower(name), ".csv") {
		if _, err := os.Stat(name); err != nil {
			return Scenario{}, fmt.Errorf("%q: want %s or a CSV file", name, strings.Join(BuiltinScenarios, ", "))
		}
	}
	file, err := os.Open(name)
	if err != nil {
		return Scenario{}, err
	}
	defer func() { _ = file.Close() }()
	return ParseCSV(name, file)
}

// SaveCSV writes a scenario to the file at path as WriteCSV does, for
// LoadScenario to read back.
func SaveCSV(path string, sc Scenario) (err error) {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return WriteCSV(file, sc)
}
