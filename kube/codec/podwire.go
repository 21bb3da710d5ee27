package codec

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// Pods come from the server as protobuf. The generated decoder builds a
// whole corev1.Pod (about 1.2 KB of structs before any string, plus
// managedFields, env, volumes...) that model.SlimPodSharing then reduces to
// the few fields the model keeps. With tens of thousands of Pods that
// garbage, allocated between the long-lived slim Pods, fragments the heap:
// resident memory was about twice the live heap. This file reads the
// protobuf bytes straight into *model.Pod, as batchsandboxes.go does for
// BatchSandboxes from JSON: what the model keeps is allocated, everything
// else is skipped without being allocated. The result is the Pod
// SlimPodSharing makes of the same bytes decoded the ordinary way
// (podwire_test.go checks it field by field, down to nil against empty, on
// random Pods and in FuzzDecodePod). What is kept is decided once, in
// model: the fields are those of model.Pod, and where a field is kept only
// sometimes this file asks the rule SlimPodSharing asks
// (model.KeepsMemoryLimit, KeepsPodCondition, InitContainerCompleted,
// KeepsPodIPs); only the reading of the values is this file's own.
//
// Protobuf merges a message field that occurs twice, appends to repeated
// fields and lets the last scalar win; the generated decoder does the same
// and so does this one, so that even concatenated messages decode alike.

// Field numbers, from the generated.proto files of k8s.io/api v0.37.2
// (core/v1) and k8s.io/apimachinery v0.37.2 (pkg/apis/meta/v1). Only the
// fields read are named; every other one is skipped.
const (
	// k8s.io.api.core.v1.Pod
	podMetadata protowire.Number = 1
	podSpec     protowire.Number = 2
	podStatus   protowire.Number = 3

	// k8s.io.api.core.v1.PodList
	podListMetadata protowire.Number = 1
	podListItems    protowire.Number = 2

	// k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta
	metaName                       protowire.Number = 1
	metaNamespace                  protowire.Number = 3
	metaUID                        protowire.Number = 5
	metaResourceVersion            protowire.Number = 6
	metaCreationTimestamp          protowire.Number = 8
	metaDeletionTimestamp          protowire.Number = 9
	metaDeletionGracePeriodSeconds protowire.Number = 10
	metaLabels                     protowire.Number = 11
	metaOwnerReferences            protowire.Number = 13
	metaFinalizers                 protowire.Number = 14

	// k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference
	ownerKind       protowire.Number = 1
	ownerName       protowire.Number = 3
	ownerAPIVersion protowire.Number = 5

	// k8s.io.api.core.v1.PodSpec
	specContainers                    protowire.Number = 2
	specTerminationGracePeriodSeconds protowire.Number = 4
	specNodeName                      protowire.Number = 10
	specHostNetwork                   protowire.Number = 11

	// k8s.io.api.core.v1.Container
	containerName          protowire.Number = 1
	containerImage         protowire.Number = 2
	containerCommand       protowire.Number = 3
	containerArgs          protowire.Number = 4
	containerResources     protowire.Number = 8
	containerLivenessProbe protowire.Number = 10

	// k8s.io.api.core.v1.ResourceRequirements
	resourcesLimits protowire.Number = 1

	// k8s.io.api.core.v1.PodStatus
	statusPhase                 protowire.Number = 1
	statusConditions            protowire.Number = 2
	statusMessage               protowire.Number = 3
	statusReason                protowire.Number = 4
	statusPodIP                 protowire.Number = 6
	statusStartTime             protowire.Number = 7
	statusContainerStatuses     protowire.Number = 8
	statusInitContainerStatuses protowire.Number = 10
	statusPodIPs                protowire.Number = 12

	// k8s.io.api.core.v1.PodCondition
	conditionType               protowire.Number = 1
	conditionStatus             protowire.Number = 2
	conditionLastTransitionTime protowire.Number = 4
	conditionReason             protowire.Number = 5
	conditionMessage            protowire.Number = 6

	// k8s.io.api.core.v1.ContainerStatus
	cstatusName         protowire.Number = 1
	cstatusState        protowire.Number = 2
	cstatusLastState    protowire.Number = 3
	cstatusReady        protowire.Number = 4
	cstatusRestartCount protowire.Number = 5
	cstatusImage        protowire.Number = 6
	cstatusImageID      protowire.Number = 7

	// k8s.io.api.core.v1.ContainerState
	stateTerminated protowire.Number = 3

	// k8s.io.api.core.v1.ContainerStateTerminated
	terminatedExitCode protowire.Number = 1

	// k8s.io.api.core.v1.PodIP
	podIPIP protowire.Number = 1
)

// decodePodList reads a PodList message (the raw of its envelope) into
// model Pods and the list's metadata: what a list object for client-go's
// reflector needs. The reflector takes the list's resourceVersion from the
// ListMeta and never reads its items' (the model's ObjectMeta has none), so
// they are not copied out.
func decodePodList(data []byte, lists *mem.StringLists) ([]*model.Pod, metav1.ListMeta, error) {
	var meta metav1.ListMeta
	n := 0
	err := eachField(data, func(f field) (err error) {
		switch f.num {
		case podListMetadata:
			// Merged into meta, as the generated decoder does.
			err = f.message("metadata", meta.Unmarshal)
		case podListItems:
			if _, err = f.bytes(); err != nil {
				err = fmt.Errorf("items[%d]: %w", n, err)
			}
			n++
		}
		return err
	})
	if err != nil {
		return nil, metav1.ListMeta{}, fmt.Errorf("decoding a PodList: %w", err)
	}
	// Counted first, so the items are allocated at their final size. The
	// second reading cannot fail where the first did not.
	items := make([]*model.Pod, 0, n)
	var intern internCache // the list's Pods repeat their strings
	err = eachField(data, func(f field) error {
		if f.num != podListItems {
			return nil
		}
		p, _, err := decodePodMessage(f.b, lists, &intern)
		if err != nil {
			return fmt.Errorf("items[%d]: %w", len(items), err)
		}
		items = append(items, p)
		return nil
	})
	if err != nil {
		return nil, metav1.ListMeta{}, fmt.Errorf("decoding a PodList: %w", err)
	}
	return items, meta, nil
}

// decodePod reads a Pod message (the raw of its envelope) into the Pod
// model.SlimPodSharing(pod, lists) makes of it, and returns its
// resourceVersion beside it, which the model does not keep but a watch's
// reflector reads from each event.
func decodePod(data []byte, lists *mem.StringLists, intern *internCache) (*model.Pod, string, error) {
	p, rv, err := decodePodMessage(data, lists, intern)
	if err != nil {
		return nil, "", err
	}
	return p, string(rv), nil
}

// decodePodMessage is decodePod with the resourceVersion aliasing data, for
// callers that do not keep it.
func decodePodMessage(data []byte, lists *mem.StringLists, intern *internCache) (*model.Pod, []byte, error) {
	w := podWire{lists: lists, intern: intern}
	err := eachField(data, func(f field) (err error) {
		switch f.num {
		case podMetadata:
			err = f.message("metadata", w.readMeta)
		case podSpec:
			err = f.message("spec", w.readSpec)
		case podStatus:
			err = f.message("status", w.readStatus)
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("decoding a Pod: %w", err)
	}
	p, err := w.build()
	if err != nil {
		return nil, nil, fmt.Errorf("decoding a Pod: %w", err)
	}
	return p, w.resourceVersion, nil
}

// podWire is a Pod read off the wire, before it becomes a model.Pod: the
// scalars the model keeps, as byte slices of the input until they are
// known to be the last of their field, and the raw messages of the
// repeated fields. Those are decoded once the whole Pod is read: a
// container's memory limit is kept only when its status (which comes after
// the spec) says it ended, which init statuses and conditions are kept is
// known only from their contents, and every slice is allocated at its final
// size. Times and probes are decoded as they come: the model keeps them.
type podWire struct {
	lists  *mem.StringLists
	intern *internCache // the stream's (nil: none)

	// metadata
	name, namespace, uid, resourceVersion []byte
	creationTimestamp                     metav1.Time
	deletionTimestamp                     *metav1.Time
	deletionGrace                         optionalInt64
	labels, owners, finalizers            rawList

	// spec
	nodeName         []byte
	hostNetwork      bool
	terminationGrace optionalInt64
	containers       rawList

	// status
	phase, podIP, reason, message []byte
	startTime                     metav1.Time
	startTimeSet                  bool
	conditions, podIPs            rawList
	statuses, initStatuses        rawList
}

// optionalInt64 is an *int64 field, allocated only once the last of its
// occurrences is read.
type optionalInt64 struct {
	set bool
	v   int64
}

func (o optionalInt64) ptr() *int64 {
	if !o.set {
		return nil
	}
	v := o.v
	return &v
}

func (w *podWire) readMeta(b []byte) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case metaName:
			w.name, err = f.bytes()
		case metaNamespace:
			w.namespace, err = f.bytes()
		case metaUID:
			w.uid, err = f.bytes()
		case metaResourceVersion:
			w.resourceVersion, err = f.bytes()
		case metaCreationTimestamp:
			err = f.message("creationTimestamp", w.creationTimestamp.Unmarshal)
		case metaDeletionTimestamp:
			if w.deletionTimestamp == nil {
				w.deletionTimestamp = &metav1.Time{}
			}
			err = f.message("deletionTimestamp", w.deletionTimestamp.Unmarshal)
		case metaDeletionGracePeriodSeconds:
			err = f.setInt64(&w.deletionGrace)
		case metaLabels:
			err = f.repeated(&w.labels)
		case metaOwnerReferences:
			err = f.repeated(&w.owners)
		case metaFinalizers:
			err = f.repeated(&w.finalizers)
		}
		return err
	})
}

func (w *podWire) readSpec(b []byte) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case specContainers:
			err = f.repeated(&w.containers)
		case specTerminationGracePeriodSeconds:
			err = f.setInt64(&w.terminationGrace)
		case specNodeName:
			w.nodeName, err = f.bytes()
		case specHostNetwork:
			w.hostNetwork, err = f.bool()
		}
		return err
	})
}

func (w *podWire) readStatus(b []byte) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case statusPhase:
			w.phase, err = f.bytes()
		case statusConditions:
			err = f.repeated(&w.conditions)
		case statusMessage:
			w.message, err = f.bytes()
		case statusReason:
			w.reason, err = f.bytes()
		case statusPodIP:
			w.podIP, err = f.bytes()
		case statusStartTime:
			w.startTimeSet = true
			err = f.message("startTime", w.startTime.Unmarshal)
		case statusContainerStatuses:
			err = f.repeated(&w.statuses)
		case statusInitContainerStatuses:
			err = f.repeated(&w.initStatuses)
		case statusPodIPs:
			err = f.repeated(&w.podIPs)
		}
		return err
	})
}

// build makes the model.Pod, as SlimPodSharing does (model/pod.go): the
// container statuses first, since the containers' memory limits depend on
// them.
func (w *podWire) build() (*model.Pod, error) {
	statuses, err := w.containerStatuses(&w.statuses)
	if err != nil {
		return nil, fmt.Errorf("status: containerStatuses%w", err)
	}
	containers, err := w.slimContainers(statuses)
	if err != nil {
		return nil, fmt.Errorf("spec: containers%w", err)
	}
	inits, err := w.slimInitStatuses()
	if err != nil {
		return nil, fmt.Errorf("status: initContainerStatuses%w", err)
	}
	condition, conditions, err := w.slimConditions()
	if err != nil {
		return nil, fmt.Errorf("status: conditions%w", err)
	}
	podIPs, err := w.slimPodIPs()
	if err != nil {
		return nil, fmt.Errorf("status: podIPs%w", err)
	}
	name := string(w.name)
	owners, err := w.ownerRefs(name)
	if err != nil {
		return nil, fmt.Errorf("metadata: ownerReferences%w", err)
	}
	labels, err := w.slimLabels(owners)
	if err != nil {
		return nil, fmt.Errorf("metadata: labels%w", err)
	}
	p := &model.Pod{
		ObjectMeta: model.ObjectMeta{
			Name:              name,
			Namespace:         w.intern.bytes(w.namespace),
			UID:               types.UID(w.uid),
			OwnerReferences:   owners,
			DeletionTimestamp: w.deletionTimestamp,
			Labels:            labels,
		},
		Spec: model.PodSpec{
			NodeName:    w.intern.bytes(w.nodeName),
			HostNetwork: w.hostNetwork,
			Containers:  containers,
		},
		Status: model.PodStatus{
			Phase:             corev1.PodPhase(w.intern.bytes(w.phase)),
			PodIP:             string(w.podIP),
			ContainerStatuses: statuses,
		},
	}
	p.SetCreated(w.creationTimestamp.Time)
	p.SetSharedFinalizers(shareStringList(w.lists, &w.finalizers))
	if w.startTimeSet {
		p.Status.SetStartTime(&w.startTime)
	}
	if w.terminationGrace.set {
		p.SetTerminationGracePeriodSeconds(&w.terminationGrace.v)
	}
	if conditions != nil {
		p.Status.SetConditions(conditions)
	} else if condition.Type != "" { // a kept condition has a type (model.KeepsPodCondition)
		p.Status.SetCondition(condition)
	}
	p.Status.SetReason(string(w.reason))
	p.Status.SetMessage(string(w.message))
	p.Status.SetPodIPs(podIPs)
	p.Status.SetInitContainerStatuses(inits)
	p.SetDeletionGracePeriodSeconds(w.deletionGrace.ptr())
	return p, nil
}

// containerStatuses decodes every status of l (slimStatuses keeps them all).
// Errors start with the index, for the caller to prefix the field's name.
func (w *podWire) containerStatuses(l *rawList) ([]model.ContainerStatus, error) {
	return decodeEach(l, func(b []byte, s *model.ContainerStatus) error { return decodeContainerStatus(b, s, w.intern) })
}

// decodeContainerStatus fills s, as slimStatuses makes one of a
// corev1.ContainerStatus. The current state is kept whole, of the last
// state only the termination.
func decodeContainerStatus(b []byte, s *model.ContainerStatus, intern *internCache) error {
	var name, image, imageID []byte
	err := eachField(b, func(f field) (err error) {
		switch f.num {
		case cstatusName:
			name, err = f.bytes()
		case cstatusState:
			err = f.message("state", s.State.Unmarshal)
		case cstatusLastState:
			err = f.message("lastState", func(b []byte) error { return decodeLastTermination(b, &s.LastTerminationState.Terminated) })
		case cstatusReady:
			s.Ready, err = f.bool()
		case cstatusRestartCount:
			var v uint64
			v, err = f.varint()
			s.RestartCount = int32(v) // int32 fields are sign-extended varints
		case cstatusImage:
			image, err = f.bytes()
		case cstatusImageID:
			imageID, err = f.bytes()
		}
		return err
	})
	if err != nil {
		return err
	}
	s.Name, s.Image, s.ImageID = intern.bytes(name), intern.bytes(image), intern.bytes(imageID)
	return nil
}

// decodeLastTermination reads a ContainerState for its terminated field
// only (TerminationState keeps no more), merging into *t as the generated
// decoder merges repeated occurrences.
func decodeLastTermination(b []byte, t **corev1.ContainerStateTerminated) error {
	return eachField(b, func(f field) error {
		if f.num != stateTerminated {
			return nil
		}
		if *t == nil {
			*t = &corev1.ContainerStateTerminated{}
		}
		return f.message("terminated", (*t).Unmarshal)
	})
}

// slimContainers decodes the spec's containers as SlimPodSharing keeps
// them: a memory limit only where model.KeepsMemoryLimit says so.
func (w *podWire) slimContainers(statuses []model.ContainerStatus) ([]model.Container, error) {
	return decodeEach(&w.containers, func(b []byte, c *model.Container) error {
		return w.decodeContainer(b, statuses, c)
	})
}

func (w *podWire) decodeContainer(b []byte, statuses []model.ContainerStatus, c *model.Container) error {
	var name, image []byte
	var command, args rawList
	var memory memoryLimit
	err := eachField(b, func(f field) (err error) {
		switch f.num {
		case containerName:
			name, err = f.bytes()
		case containerImage:
			image, err = f.bytes()
		case containerCommand:
			err = f.repeated(&command)
		case containerArgs:
			err = f.repeated(&args)
		case containerResources:
			err = f.message("resources", memory.read)
		case containerLivenessProbe:
			if c.LivenessProbe == nil {
				c.LivenessProbe = &corev1.Probe{}
			}
			err = f.message("livenessProbe", c.LivenessProbe.Unmarshal)
		}
		return err
	})
	if err != nil {
		return err
	}
	c.Name, c.Image = w.intern.bytes(name), w.intern.bytes(image)
	c.Command, c.Args = shareStrings(w.lists, &command), shareStrings(w.lists, &args)
	if memory.set && model.KeepsMemoryLimit(statuses, c.Name) {
		// As the generated decoder makes a map value: a zero Quantity when
		// the entry has none.
		q := &resource.Quantity{}
		if err := q.Unmarshal(memory.value); err != nil {
			return fmt.Errorf("resources: limits[memory]: %w", err)
		}
		c.MemoryLimit = q
	}
	return nil
}

// memoryLimit is the raw Quantity of a container's memory limit: the last
// limits entry keyed "memory" across the resources read (the generated
// decoder merges repeated resources into one map).
type memoryLimit struct {
	set   bool
	value []byte // nil: the entry had no value
}

// read reads one ResourceRequirements message.
func (m *memoryLimit) read(b []byte) error {
	return eachField(b, func(f field) error {
		if f.num != resourcesLimits {
			return nil
		}
		var key, value []byte
		if err := f.message("limits", func(b []byte) error { return decodeMapEntry(b, &key, &value) }); err != nil {
			return err
		}
		if string(key) == string(corev1.ResourceMemory) {
			m.set, m.value = true, value
		}
		return nil
	})
}

// slimInitStatuses is SlimPodSharing's: nil once every init container
// completed (model.InitContainerCompleted), else every status. The check
// reads the raw statuses, so the usual Pod (all completed) decodes none of
// them.
func (w *podWire) slimInitStatuses() ([]model.ContainerStatus, error) {
	for i := range w.initStatuses.len() {
		done, err := initCompleted(w.initStatuses.at(i))
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if !done {
			return w.containerStatuses(&w.initStatuses)
		}
	}
	return nil, nil
}

// initCompleted is model.InitContainerCompleted of the ContainerStatus b.
// Its state merges over repeated occurrences as the generated decoder
// merges them: terminated once seen stays, the last exit code wins.
func initCompleted(b []byte) (bool, error) {
	var restarts, exitCode int32
	terminated := false
	readTerminated := func(b []byte) error {
		terminated = true
		return readExitCode(b, &exitCode)
	}
	readState := func(b []byte) error { return forMessages(b, stateTerminated, "terminated", readTerminated) }
	err := eachField(b, func(f field) (err error) {
		switch f.num {
		case cstatusRestartCount:
			var v uint64
			v, err = f.varint()
			restarts = int32(v)
		case cstatusState:
			err = f.message("state", readState)
		}
		return err
	})
	if err != nil {
		return false, err
	}
	return model.InitContainerCompleted(terminated, exitCode, restarts), nil
}

func readExitCode(b []byte, exitCode *int32) error {
	return eachField(b, func(f field) error {
		if f.num != terminatedExitCode {
			return nil
		}
		v, err := f.varint()
		if err != nil {
			return err
		}
		*exitCode = int32(v)
		return nil
	})
}

// slimConditions keeps the conditions SlimPodSharing keeps
// (model.KeepsPodCondition): they are counted on the raw messages, then
// decoded into a slice of that size, or, when there is one (nearly every
// Pod: Ready), into one, which the Pod's own fields can hold without the
// slice (model.PodStatus.SetCondition).
// The one is returned by value (a pointer would move it to the heap); it has
// no Type when there is none.
func (w *podWire) slimConditions() (model.PodCondition, []model.PodCondition, error) {
	n := 0
	for i := range w.conditions.len() {
		keep, err := keepCondition(w.conditions.at(i))
		if err != nil {
			return model.PodCondition{}, nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if keep {
			n++
		}
	}
	if n == 0 {
		return model.PodCondition{}, nil, nil
	}
	var out []model.PodCondition
	if n > 1 {
		out = make([]model.PodCondition, 0, n)
	}
	for i := range w.conditions.len() {
		b := w.conditions.at(i)
		if keep, _ := keepCondition(b); !keep { // read without error above
			continue
		}
		c, err := decodeCondition(b, w.intern)
		if err != nil {
			return model.PodCondition{}, nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if n == 1 {
			return c, nil, nil
		}
		out = append(out, c)
	}
	return model.PodCondition{}, out, nil
}

// keepCondition is model.KeepsPodCondition of a raw PodCondition.
func keepCondition(b []byte) (bool, error) {
	var typ, status []byte
	err := eachField(b, func(f field) (err error) {
		switch f.num {
		case conditionType:
			typ, err = f.bytes()
		case conditionStatus:
			status, err = f.bytes()
		}
		return err
	})
	if err != nil {
		return false, err
	}
	// Views of b: the rule compares them and keeps neither.
	return model.KeepsPodCondition(corev1.PodConditionType(viewString(typ)), corev1.ConditionStatus(viewString(status))), nil
}

func decodeCondition(b []byte, intern *internCache) (model.PodCondition, error) {
	var c model.PodCondition
	var typ, status, reason, message []byte
	err := eachField(b, func(f field) (err error) {
		switch f.num {
		case conditionType:
			typ, err = f.bytes()
		case conditionStatus:
			status, err = f.bytes()
		case conditionLastTransitionTime:
			err = f.message("lastTransitionTime", c.LastTransitionTime.Unmarshal)
		case conditionReason:
			reason, err = f.bytes()
		case conditionMessage:
			message, err = f.bytes()
		}
		return err
	})
	if err != nil {
		return model.PodCondition{}, err
	}
	c.Type, c.Status = corev1.PodConditionType(intern.bytes(typ)), corev1.ConditionStatus(intern.bytes(status))
	c.Reason, c.Message = intern.bytes(reason), string(message)
	return c, nil
}

// slimPodIPs is the podIPs SlimPodSharing keeps (model.KeepsPodIPs): none
// when they only repeat the podIP.
func (w *podWire) slimPodIPs() ([]corev1.PodIP, error) {
	n := w.podIPs.len()
	if n == 0 {
		return nil, nil
	}
	var first []byte // read only when the rule needs it: a single podIPs
	if n == 1 {
		var err error
		if first, err = podIPOf(w.podIPs.at(0)); err != nil {
			return nil, fmt.Errorf("[0]: %w", err)
		}
	}
	if !model.KeepsPodIPs(n, viewString(first), viewString(w.podIP)) {
		return nil, nil
	}
	return decodeEach(&w.podIPs, func(b []byte, ip *corev1.PodIP) error { return ip.Unmarshal(b) })
}

// podIPOf reads a PodIP's ip without copying it.
func podIPOf(b []byte) ([]byte, error) {
	var ip []byte
	err := eachField(b, func(f field) (err error) {
		if f.num == podIPIP {
			ip, err = f.bytes()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return ip, nil
}

// ownerRefs is model.ownerRefsOf: kind and apiVersion interned, the name
// copied, or shared with podName (the Pod's own name) when it begins it.
func (w *podWire) ownerRefs(podName string) ([]model.OwnerReference, error) {
	return decodeEach(&w.owners, func(b []byte, o *model.OwnerReference) error {
		return decodeOwnerRef(b, podName, o, w.intern)
	})
}

// decodeOwnerRef reads one owner reference. Controllers name their Pods
// after themselves (BatchSandbox <name> owns <name>-<index>, a ReplicaSet
// <rs>-<hash>), so an owner's name that begins podName is kept as that
// part of podName instead of a copy: 48 bytes a Pod with UUID names. A
// substring keeps all of podName alive, which the Pod does anyway.
func decodeOwnerRef(b []byte, podName string, o *model.OwnerReference, intern *internCache) error {
	var apiVersion, kind, name []byte
	err := eachField(b, func(f field) (err error) {
		switch f.num {
		case ownerAPIVersion:
			apiVersion, err = f.bytes()
		case ownerKind:
			kind, err = f.bytes()
		case ownerName:
			name, err = f.bytes()
		}
		return err
	})
	if err != nil {
		return err
	}
	var ownerName string
	if strings.HasPrefix(podName, viewString(name)) {
		ownerName = podName[:len(name)]
	} else {
		ownerName = string(name)
	}
	*o = model.OwnerReference{APIVersion: intern.bytes(apiVersion), Kind: intern.bytes(kind), Name: ownerName}
	return nil
}

// slimLabels is the LabelsFrom(labels, ownerNames...) of SlimPodSharing,
// from the raw map entries: the pairs view the input, and
// model.LabelsFromPairs keeps only interned strings and copies.
func (w *podWire) slimLabels(owners []model.OwnerReference) (model.Labels, error) {
	if w.labels.len() == 0 {
		return model.Labels{}, nil
	}
	var pairBuf [8]model.LabelPair // scratch; a Pod has a handful of labels
	pairs := pairBuf[:0]
	for i := range w.labels.len() {
		var key, value []byte
		if err := decodeMapEntry(w.labels.at(i), &key, &value); err != nil {
			return model.Labels{}, fmt.Errorf("[%d]: %w", i, err)
		}
		pairs = append(pairs, model.LabelPair{Key: viewString(key), Value: viewString(value)})
	}
	var nameBuf [2]string
	names := nameBuf[:0]
	for _, o := range owners {
		names = append(names, o.Name)
	}
	return model.LabelsFromPairs(pairs, names...), nil
}

// shareStrings is StringLists.Share of a repeated string field: nil when
// the field is absent, as the generated decoder leaves it. Share interns
// every string it keeps, and keeps none of its argument's, so the scratch
// list may view the input.
func shareStrings(lists *mem.StringLists, l *rawList) []string {
	if r := shareStringList(lists, l); r != nil {
		return *r
	}
	return nil
}

// shareStringList is shareStrings for a holder that keeps a pointer to the
// list (ObjectMeta's finalizers).
func shareStringList(lists *mem.StringLists, l *rawList) *[]string {
	if l.len() == 0 {
		return nil
	}
	var buf [8]string // scratch, as rawList's
	ss := buf[:0]
	for i := range l.len() {
		ss = append(ss, viewString(l.at(i)))
	}
	return lists.ShareRef(ss)
}
