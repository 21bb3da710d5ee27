package output

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model/forensics"
)

func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.0Z")
}

// WriteRestart prints the explanation of a restart for a terminal;
// resolved says how the name given led to the Pod ("BatchSandbox b → Pod b-0").
func WriteRestart(w io.Writer, resolved string, x *forensics.RestartExplanation) {
	fmt.Fprintf(w, "%s (%s/%s uid %s), container %s, restartCount %d\n", resolved, x.Namespace, x.Pod, x.UID, x.Container, x.RestartCount)
	if l := x.Liveness; l != nil {
		grace := "the Pod's"
		if l.GraceFromProbe {
			grace = "the probe's own, overriding the Pod's"
		}
		fmt.Fprintf(w, "liveness probe: failureThreshold %d, periodSeconds %d, timeoutSeconds %d; terminationGracePeriodSeconds %d (%s)",
			l.FailureThreshold, l.PeriodSeconds, l.TimeoutSeconds, l.GraceSeconds, grace)
		if len(l.Defaulted) > 0 {
			fmt.Fprintf(w, "; defaults for unset %s", strings.Join(l.Defaulted, ", "))
		}
		fmt.Fprintf(w, "\nformula: kill = block start + %d × %ds + %ds = block start + %ds\n",
			l.FailureThreshold, l.PeriodSeconds, l.GraceSeconds, l.FailureThreshold*l.PeriodSeconds+l.GraceSeconds)
	}
	for _, r := range x.Recorded {
		fmt.Fprintf(w, "recorded: %s reason %s exit %d, started %s, finished %s\n", r.Field, textsafe.OrDash(r.Reason), r.ExitCode, clock(r.StartedAt), clock(r.FinishedAt))
	}
	for _, n := range x.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	if len(x.Checks) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "BLOCK START\tPREDICTED KILL\tWINDOW\tOBSERVED (finishedAt)\tDIFF\tVERDICT")
		for _, c := range x.Checks {
			obs, diff := "not recorded", "-"
			if c.Recorded != nil {
				obs = clock(c.Recorded.FinishedAt)
			}
			if c.Diff != nil {
				diff = fmt.Sprintf("%+.1fs", c.Diff.Seconds())
			}
			fmt.Fprintf(tw, "%s\t%s\t%s – %s\t%s\t%s\t%s\n", clock(c.BlockStart), clock(c.Predicted),
				c.Earliest.UTC().Format("15:04:05"), c.Latest.UTC().Format("15:04:05"), obs, diff, c.Verdict)
		}
		_ = tw.Flush()
		for _, c := range x.Checks {
			fmt.Fprintf(w, "\nevidence for block start %s:\n", clock(c.BlockStart))
			for _, e := range c.Evidence {
				fmt.Fprintf(w, "  %-8s  %s\n", e.Kind, e.Text)
			}
		}
	}
	fmt.Fprintln(w, "\nconfirm:")
	for _, c := range x.Confirm {
		fmt.Fprintln(w, "  "+c)
	}
}
