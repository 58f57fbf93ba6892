// Package validate checks deploy/'s Kubernetes manifests against the
// Kubernetes API's own types (k8s.io/api, decoded strictly, so a
// misspelt or misplaced field fails) and the compose file against the
// Compose specification (compose-go, the reference loader, with the
// spec's JSON schema built in). Both run offline, unlike kubeconform.
//
// It is a module of its own so that the main module does not carry
// Kubernetes' and Compose's dependencies: run it with
// "cd deploy/validate && go test ./...", as .ci/run does.
package validate
