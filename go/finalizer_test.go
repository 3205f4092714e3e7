package flakery

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// zooKeeper is a server started by tests/zookeeper/zkserver.py on an ephemeral port.
type zooKeeper struct {
	Pid     int    `json:"pid"`
	Connect string `json:"connect"`
	Dir     string `json:"dir"`
}

var zkHarness = filepath.Join("..", "tests", "zookeeper", "zkserver.py")

func startZooKeeper(t *testing.T) *zooKeeper {
	t.Helper()
	if _, err := os.Stat("/usr/share/java/zookeeper.jar"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ZooKeeper is not installed, and CI=true: no test may be skipped")
		}
		t.Skip("!!! ZooKeeper is not installed: ZooKeeper tests SKIPPED !!!")
	}
	out, err := exec.Command("python3", zkHarness, "start").Output()
	if err != nil {
		t.Fatalf("zkserver.py start: %v", err)
	}
	var zk zooKeeper
	if err := json.Unmarshal(out, &zk); err != nil {
		t.Fatalf("zkserver.py start printed %q: %v", out, err)
	}
	t.Cleanup(func() {
		zk.signal(t, "resume")
		_ = exec.Command("python3", zkHarness, "stop", strconv.Itoa(zk.Pid), zk.Dir).Run()
	})
	return &zk
}

func (zk *zooKeeper) signal(t *testing.T, what string) {
	if err := exec.Command("python3", zkHarness, what, strconv.Itoa(zk.Pid)).Run(); err != nil {
		t.Fatalf("zkserver.py %s: %v", what, err)
	}
}

// paused says whether the server is stopped (SIGSTOP): its state in /proc is T.
func (zk *zooKeeper) paused() bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(zk.Pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return fields[0] == "T"
}

// A generator collected while its ZooKeeper is stopped: the finalizer frees it and returns
// before the server can answer anything (the release is carried in the background).
func TestFinalizerReturnsWhileZooKeeperIsPaused(t *testing.T) {
	zk := startZooKeeper(t)
	g, err := New(Options{ZooKeeper: zk.Connect, Namespace: "go-finalizer", SessionTimeoutMs: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.NextIDs(10); err != nil {
		t.Fatal(err)
	}
	freed := make(chan bool, 1)
	hook := func() { freed <- zk.paused() }
	afterFree.Store(&hook)
	defer afterFree.Store(nil)

	zk.signal(t, "pause")
	g = nil
	var pausedWhenFreed bool
	for done := false; !done; {
		runtime.GC()
		select {
		case pausedWhenFreed = <-freed:
			done = true
		default:
			runtime.Gosched()
		}
	}
	zk.signal(t, "resume")
	if !pausedWhenFreed {
		t.Fatal("the finalizer returned only after the server ran again")
	}
}
