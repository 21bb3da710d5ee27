package inspect

import (
	"context"
	"errors"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

type recorder struct {
	deleted []string
	logOpts kube.LogOptions
}

func (r *recorder) YAML(context.Context, *model.Sandbox) (string, error) { return "kind: X\n", nil }
func (r *recorder) Logs(_ context.Context, _ *model.Sandbox, o kube.LogOptions, _ io.Writer) error {
	r.logOpts = o
	return nil
}
func (r *recorder) Events(context.Context, *model.Sandbox) ([]corev1.Event, error) { return nil, nil }
func (r *recorder) Delete(_ context.Context, sb *model.Sandbox) error {
	r.deleted = append(r.deleted, sb.Key)
	return nil
}

func (r *recorder) ForceDelete(_ context.Context, sb *model.Sandbox) error {
	r.deleted = append(r.deleted, "force "+sb.Key)
	return nil
}

func TestDeleteRefusedReadOnly(t *testing.T) {
	t.Parallel()
	sb := &model.Sandbox{Key: "bsbx/ns/a", Meta: &model.ObjectMeta{Namespace: "ns", Name: "a"}}
	for _, tc := range []struct {
		readOnly bool
		wantCode string
	}{{true, refusal.CodeReadOnly}, {false, ""}} {
		r := &recorder{}
		err := New(r, tc.readOnly).Delete(context.Background(), sb)
		var e *refusal.Error
		switch {
		case tc.wantCode != "" && (!errors.As(err, &e) || e.ErrorCode() != tc.wantCode):
			t.Errorf("readOnly=%v: err %v, want code %s", tc.readOnly, err, tc.wantCode)
		case tc.wantCode != "" && len(r.deleted) > 0:
			t.Errorf("readOnly=%v: delete reached kube", tc.readOnly)
		case tc.wantCode == "" && (err != nil || len(r.deleted) != 1):
			t.Errorf("readOnly=%v: err %v, deleted %v", tc.readOnly, err, r.deleted)
		}
	}
}

func TestLogsFollowUnlessPrevious(t *testing.T) {
	t.Parallel()
	sb := &model.Sandbox{Key: "bsbx/ns/a"}
	for _, previous := range []bool{false, true} {
		r := &recorder{}
		if err := New(r, true).Logs(context.Background(), sb, previous, io.Discard); err != nil {
			t.Fatal(err)
		}
		if r.logOpts.Previous != previous || r.logOpts.Follow == previous || r.logOpts.TailLines == nil || *r.logOpts.TailLines != 2000 {
			t.Errorf("previous=%v: opts %+v", previous, r.logOpts)
		}
	}
}
