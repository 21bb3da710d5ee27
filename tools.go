//go:build tools

// This file pins the modules sandscope's packages are written against, so
// go.mod lists them before every package imports them. It is never built.
package main

import (
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/google/uuid"
	_ "github.com/sahilm/fuzzy"
	_ "k8s.io/client-go/dynamic/dynamicinformer"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/tools/portforward"
	_ "k8s.io/client-go/tools/remotecommand"
	_ "k8s.io/cri-streaming/pkg/streaming/portforward"
	_ "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	_ "k8s.io/streaming/pkg/httpstream"
	_ "k8s.io/utils/exec"
	_ "sigs.k8s.io/yaml"
)
