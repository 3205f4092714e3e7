package flakery

import (
	"errors"
	"testing"
)

func TestDoctorReportsTheCoresBudgets(t *testing.T) {
	report, err := Doctor(Options{Layout: String("baidu"), WorkerID: Uint64(3)})
	if err != nil {
		t.Fatal(err)
	}
	if report["exit_code"] != float64(2) {
		t.Fatalf("baidu ran out in 2024: exit_code %v", report["exit_code"])
	}
	layout := report["layout"].(map[string]any)
	if layout["time_runs_out"] != "2024-11-20T13:24:16.000Z" {
		t.Fatalf("time_runs_out %v", layout["time_runs_out"])
	}
	if _, err := Doctor(Options{Layout: String("time:99")}); !errors.Is(err, ErrInvalidLayout) {
		t.Fatalf("a bad layout: %v", err)
	}
}
