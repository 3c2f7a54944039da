package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The image of the KRM function, for `kpt fn eval --image`, kustomize's
// container functions and container-based CI: the linux binaries of the
// release in an OCI image layout, written as one tar file. Nothing comes
// from a base image (none can be fetched, and none is needed: the binary is
// static), so the layer holds the binary and the /etc/passwd and /etc/group
// that name the users the image runs as.

// ImageFile is the image's OCI layout tarball in the release.
const ImageFile = "kubectl-crd_image.oci.tar"

// ImageBinary is where the image holds the plugin's binary.
const ImageBinary = "/kubectl-crd"

// ImageEntrypoint runs the KRM function: kpt and kustomize start the
// container without arguments and write the ResourceList on its stdin;
// arguments given to `docker run` follow (standalone mode: CONFIG FILE...).
var ImageEntrypoint = []string{ImageBinary, "krm"}

// ImageCompanion is crd-helm in the image, beside ImageBinary where the
// function looks for it to render Helm chart sources; WriteImage reads it
// beside each binary of ImageOptions.Binaries.
const ImageCompanion = "/crd-helm"

// ImageUser is the user the image runs as unless told otherwise: not root
// (65532, "nonroot", as distroless images have it). kpt and kustomize run
// containers as "nobody", which /etc/passwd must therefore name.
const ImageUser = "65532:65532"

// ImageEnv is the image's environment: no cache of CRD indexes, which a
// container started afresh for each run would never read again, and which
// "nobody" has no home to keep in.
var ImageEnv = []string{"KUBECTL_CRD_CACHE_DIR=off"}

// Homepage is the project's home, as the krew manifest names it.
const Homepage = "https://github.com/kubectl-crd/kubectl-crd"

// The media types of an OCI image layout.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// The users and groups of the image: nonroot, its default user, and
// nobody, whom kpt and kustomize name with docker run --user.
const (
	imagePasswd = "nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
	imageGroup = "nonroot:x:65532:\nnobody:x:65534:\n"
)

// Descriptor points at a blob of the layout, as the OCI image spec has it.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *ImagePlatform    `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ImagePlatform is the platform of a manifest in an index.
type ImagePlatform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

// ImageIndex is an OCI image index: index.json, and the image index it
// points at, whose manifests are the image's platforms.
type ImageIndex struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []Descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// ImageManifest is the OCI image manifest of one platform.
type ImageManifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// ImageConfig is the OCI image configuration of one platform.
type ImageConfig struct {
	Created      string         `json:"created"`
	Architecture string         `json:"architecture"`
	OS           string         `json:"os"`
	Variant      string         `json:"variant,omitempty"`
	Config       ImageRunConfig `json:"config"`
	RootFS       ImageRootFS    `json:"rootfs"`
	History      []ImageHistory `json:"history"`
}

// ImageRunConfig is how a container of the image runs.
type ImageRunConfig struct {
	User       string            `json:"User"`
	Env        []string          `json:"Env"`
	Entrypoint []string          `json:"Entrypoint"`
	Labels     map[string]string `json:"Labels"`
}

// ImageRootFS lists the layers by the digest of their uncompressed tar.
type ImageRootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// ImageHistory says how a layer was made.
type ImageHistory struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

// ImageOptions are the inputs of an image.
type ImageOptions struct {
	Version string
	// Revision is the commit built, "" when unknown.
	Revision string
	// Binaries are the linux binaries, by platform, each with crd-helm
	// beside it (ImageCompanion).
	Binaries map[Platform]string
	// MTime is the time of the image and of its files.
	MTime time.Time
}

// ImageLabels are the image's labels (and its index's annotations): the
// OCI pre-defined annotation keys. kpt and kustomize read none of their own.
func ImageLabels(version, revision string, created time.Time) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":         "kubectl-crd",
		"org.opencontainers.image.description":   "kubectl crd as a KRM function: what the Kubernetes API server drops from or refuses in custom resources, by its own code (kubectl-crd krm)",
		"org.opencontainers.image.url":           Homepage,
		"org.opencontainers.image.source":        Homepage,
		"org.opencontainers.image.documentation": Homepage + "/blob/main/docs/ci.md",
		"org.opencontainers.image.licenses":      "Apache-2.0",
		"org.opencontainers.image.version":       version,
		"org.opencontainers.image.created":       created.UTC().Format(time.RFC3339),
	}
	if revision != "" {
		l["org.opencontainers.image.revision"] = revision
	}
	return l
}

// imagePlatform is the OCI platform of a release platform: arm64 is
// built for the v8.0 baseline (GOARM64).
func imagePlatform(p Platform) ImagePlatform {
	ip := ImagePlatform{Architecture: p.Arch, OS: p.OS}
	if p.Arch == "arm64" {
		ip.Variant = "v8"
	}
	return ip
}

// WriteImage writes the image of the binaries as an OCI image layout in a
// tar: an image index of one manifest per platform, each with one layer.
// The bytes depend only on the options: JSON in a fixed field order,
// tar entries sorted and dated MTime, gzip headers without name or time.
func WriteImage(w io.Writer, o ImageOptions) error {
	if len(o.Binaries) == 0 {
		return fmt.Errorf("image: no binaries")
	}
	created := o.MTime.UTC().Truncate(time.Second)
	labels := ImageLabels(o.Version, o.Revision, created)
	blobs := map[string][]byte{}
	add := func(mediaType string, b []byte) Descriptor {
		sum := sha256.Sum256(b)
		d := Descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(b))}
		blobs[d.Digest] = b
		return d
	}
	index := ImageIndex{SchemaVersion: 2, MediaType: MediaTypeIndex, Annotations: labels}
	for _, p := range sortedPlatforms(o.Binaries) {
		if p.OS != "linux" {
			return fmt.Errorf("image: %s is not a linux platform", p)
		}
		layer, diffID, err := imageLayer(o.Binaries[p], created)
		if err != nil {
			return err
		}
		ip := imagePlatform(p)
		config, err := json.Marshal(ImageConfig{
			Created: created.Format(time.RFC3339), Architecture: ip.Architecture, OS: ip.OS, Variant: ip.Variant,
			Config:  ImageRunConfig{User: ImageUser, Env: ImageEnv, Entrypoint: ImageEntrypoint, Labels: labels},
			RootFS:  ImageRootFS{Type: "layers", DiffIDs: []string{diffID}},
			History: []ImageHistory{{Created: created.Format(time.RFC3339), CreatedBy: "make dist (hack/dist)"}},
		})
		if err != nil {
			return err
		}
		manifest, err := json.Marshal(ImageManifest{
			SchemaVersion: 2, MediaType: MediaTypeManifest,
			Config: add(MediaTypeConfig, config),
			Layers: []Descriptor{add(MediaTypeLayer, layer)},
		})
		if err != nil {
			return err
		}
		d := add(MediaTypeManifest, manifest)
		d.Platform = &ip
		index.Manifests = append(index.Manifests, d)
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return err
	}
	top := add(MediaTypeIndex, indexJSON)
	top.Annotations = map[string]string{"org.opencontainers.image.ref.name": o.Version}
	topJSON, err := json.Marshal(ImageIndex{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{top}})
	if err != nil {
		return err
	}
	files := []tarFile{
		{name: "blobs/", dir: true},
		{name: "blobs/sha256/", dir: true},
		{name: "index.json", data: topJSON},
		{name: "oci-layout", data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	}
	for digest, b := range blobs {
		files = append(files, tarFile{name: "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:"), data: b})
	}
	return writeTar(w, files, created)
}

// imageLayer is the gzipped tar of the image's files and the digest of
// the tar itself (the config's diff_id).
func imageLayer(binary string, mtime time.Time) (layer []byte, diffID string, err error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, "", err
	}
	companion, err := os.ReadFile(filepath.Join(filepath.Dir(binary), path.Base(ImageCompanion)))
	if err != nil {
		return nil, "", fmt.Errorf("image: the companion beside %s: %w", binary, err)
	}
	var tarBuf bytes.Buffer
	err = writeTar(&tarBuf, []tarFile{
		{name: "etc/", dir: true},
		{name: "etc/group", data: []byte(imageGroup)},
		{name: "etc/passwd", data: []byte(imagePasswd)},
		{name: strings.TrimPrefix(ImageBinary, "/"), data: bin, exec: true},
		{name: strings.TrimPrefix(ImageCompanion, "/"), data: companion, exec: true},
	}, mtime)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(tarBuf.Bytes())
	// The default level: on the plugin's binary, a third of the time of
	// BestCompression for 0.4% more bytes (12 s against 41 s, 42.7 MB
	// against 42.6 MB, an unstripped linux/amd64 build).
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}

// tarFile is an entry of a tar written from memory.
type tarFile struct {
	name string
	data []byte
	dir  bool
	exec bool
}

// writeTar writes the entries sorted by name, owned by 0:0 without names,
// dated mtime, in USTAR headers: the bytes depend on nothing else.
func writeTar(w io.Writer, files []tarFile, mtime time.Time) error {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b tarFile) int { return strings.Compare(a.name, b.name) })
	tw := tar.NewWriter(w)
	for _, f := range files {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Size: int64(len(f.data)), Mode: 0o644, ModTime: mtime, Format: tar.FormatUSTAR}
		switch {
		case f.dir:
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeDir, 0o755, 0
		case f.exec:
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("image: %s: %v", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("image: %s: %v", f.name, err)
		}
	}
	return tw.Close()
}
