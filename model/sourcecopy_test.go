package model

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fullBatchSandbox sets every field of a BatchSandbox and of its Rare part,
// so that a copy of it has every pointer and slice to get wrong.
func fullBatchSandbox() *BatchSandbox {
	deleted := metav1.NewTime(time.Date(2026, 11, 29, 17, 30, 0, 0, time.UTC))
	grace := int64(30)
	expire := time.Date(2026, 11, 29, 18, 20, 0, 0, time.UTC)
	noticed := time.Date(2026, 11, 29, 17, 21, 0, 0, time.UTC)
	return &BatchSandbox{
		ObjectMeta: ObjectMeta{Name: "sbx-a", Namespace: "team-rl", UID: "6f1c",
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 29, 17, 20, 0, 0, time.UTC)),
			DeletionTimestamp: &deleted, DeletionGracePeriodSeconds: &grace,
			Labels:          LabelsFrom(map[string]string{"app": "rl"}),
			OwnerReferences: []OwnerReference{{APIVersion: "v1", Kind: "Owner", Name: "o"}},
			Finalizers:      []string{"pool.sandbox.opensandbox.io/pool-allocation"}},
		ResourceVersion: "812", Replicas: 1, InitialEventsEnd: true, ExpireTime: &expire,
		MainImage: "python:3.12", MainCommand: []string{BootstrapPath, "tail", "-f", "/dev/null"},
		Phase: PhaseSucceed, StatusReplicas: 1, Allocated: 1, Ready: 1,
		Endpoints: []string{"10.0.3.7"},
		Rare: &RareBatchSandbox{PoolRef: "pool-a", AllocatedPods: []string{"pool-a-x1"},
			Notices: []Notice{{Code: CodeBadAnnotation, Severity: SeverityWarning, Message: "m",
				Evidence: []Evidence{{Kind: Observed, Text: "t", At: &noticed}}}}},
	}
}

// The informer hands out copies of cached objects; a copy must share
// nothing that can be written through, the Rare part included.
func TestBatchSandboxDeepCopySharesNothing(t *testing.T) {
	b := fullBatchSandbox()
	for _, v := range []reflect.Value{reflect.ValueOf(*b), reflect.ValueOf(*b.Rare)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("the fixture leaves %s.%s empty, so its copy goes untested", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
	c := b.DeepCopyObject().(*BatchSandbox)
	if !reflect.DeepEqual(b, c) {
		t.Fatalf("copy differs:\n%+v\n%+v", b, c)
	}
	for _, where := range sharedMemory(reflect.ValueOf(b), reflect.ValueOf(c), "BatchSandbox") {
		t.Errorf("the copy shares %s with the original", where)
	}
}

// A BatchSandbox without rare fields copies without a Rare part.
func TestBatchSandboxDeepCopyWithoutRare(t *testing.T) {
	b := fullBatchSandbox()
	b.Rare = nil
	if c := b.DeepCopyObject().(*BatchSandbox); c.Rare != nil || !reflect.DeepEqual(b, c) {
		t.Fatalf("copy differs:\n%+v\n%+v", b, c)
	}
}

// sharedMemory lists the places (as paths from path) where b points at
// memory a points at: a pointer, a slice's backing array or a map they have
// in common. Strings, time.Time (its *Location is immutable) and Labels
// (read only, shared by design) may be shared and are not looked into.
func sharedMemory(a, b reflect.Value, path string) []string {
	switch a.Type() {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[Labels]():
		return nil
	}
	var out []string
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Kind() == reflect.Pointer && a.Pointer() == b.Pointer() {
			return []string{path}
		}
		out = sharedMemory(a.Elem(), b.Elem(), path)
	case reflect.Map:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return []string{path}
		}
		// The model's cached types have no maps to look into.
	case reflect.Slice:
		if a.Len() == 0 || b.Len() == 0 {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
		for i := range min(a.Len(), b.Len()) {
			out = append(out, sharedMemory(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]")...)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			out = append(out, sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
		}
	}
	return out
}
