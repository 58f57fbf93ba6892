package validate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// checkManifests decodes every document of a manifest file strictly into
// the API type of its kind.
func checkManifests(data []byte) (kinds []string, err error) {
	for i, doc := range bytes.Split(data, []byte("\n---\n")) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var obj any
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 Service":
			obj = &corev1.Service{}
		case "apps/v1 StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "policy/v1 PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		default:
			return nil, fmt.Errorf("document %d: unexpected %s %s", i, meta.APIVersion, meta.Kind)
		}
		// As the API server decodes: field names case-sensitive, unknown
		// and duplicate fields errors.
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, meta.Kind, err)
		}
		strict, err := kjson.UnmarshalStrict(js, obj, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
		if err == nil {
			err = errors.Join(strict...)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, meta.Kind, err)
		}
		kinds = append(kinds, meta.Kind)
	}
	return kinds, nil
}

func TestKubernetesManifests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "kubernetes", "zoo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := checkManifests(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 4 {
		t.Errorf("kinds %v, want two Services, a PodDisruptionBudget and a StatefulSet", kinds)
	}
}

// The check fails on what it is there to catch.
func TestKubernetesCheckRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"misspelt field":   "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIp: None}\n",
		"misplaced field":  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: x}\nmaxUnavailable: 1\n",
		"wrong type":       "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replicas: three}\n",
		"wrong apiVersion": "apiVersion: policy/v1beta2\nkind: PodDisruptionBudget\nmetadata: {name: x}\n",
	} {
		if _, err := checkManifests([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func loadCompose(t *testing.T, path string) error {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{path}, cli.WithName("zoo"))
	if err != nil {
		return err
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return err
	}
	if len(p.Services) != 3 {
		return fmt.Errorf("%d services, want 3", len(p.Services))
	}
	return nil
}

func TestComposeFile(t *testing.T) {
	if err := loadCompose(t, filepath.Join("..", "compose.yaml")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "compose.yaml")
	doc := "services:\n  a: {image: zoo, hostnme: a}\n  b: {image: zoo}\n  c: {image: zoo}\n"
	if err := os.WriteFile(bad, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := loadCompose(t, bad); err == nil {
		t.Error("a misspelt service key passes")
	}
}
