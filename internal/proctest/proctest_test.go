package proctest_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/narrator/narrator/internal/proctest"
)

func TestScriptPIDExited(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "sh", "apt-get install dash")
	pidFile := filepath.Join(t.TempDir(), "script.pid")
	cmd := exec.Command(proctest.Script(t, `echo $$ > "$1"`), pidFile)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := proctest.PID(t, pidFile); got != cmd.Process.Pid {
		t.Errorf("PID = %d, want the script's %d", got, cmd.Process.Pid)
	}
	proctest.Exited(t, cmd.Process.Pid, "a script that has ended")
}

func TestNeedEnv(t *testing.T) {
	t.Setenv("NARRATOR_TEST_NEEDENV", "the value")
	if got := proctest.NeedEnv(t, "NARRATOR_TEST_NEEDENV", "a part", "set it"); got != "the value" {
		t.Errorf("NeedEnv = %q, want the variable's value", got)
	}
}
