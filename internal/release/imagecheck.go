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
	"strings"
)

// Image is an OCI image layout as ReadImage found it.
type Image struct {
	// Ref is the name index.json gives the image (the version).
	Ref   string
	Index ImageIndex
	// Platforms are the index's images, in its order.
	Platforms []PlatformImage
}

// PlatformImage is the image of one platform.
type PlatformImage struct {
	Platform ImagePlatform
	Manifest ImageManifest
	Config   ImageConfig
	// Files are the entries of its one layer, in order.
	Files []ImageFileEntry
}

// ImageFileEntry is a file of a layer.
type ImageFileEntry struct {
	Header *tar.Header
	Data   []byte
}

// ReadImage reads an OCI image layout tarball as WriteImage writes it and
// checks what a registry or a container runtime relies on: the layout
// version; index.json pointing at one image index; every descriptor's
// media type, size and sha256 digest true to its blob; a platform on each
// manifest, matching its config; one gzipped layer each, whose tar's
// digest is the config's diff_id; and no blob that nothing points at.
func ReadImage(r io.Reader) (*Image, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("image: %v", err)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("image: %s: not a regular file", hdr.Name)
		}
		if _, dup := files[hdr.Name]; dup {
			return nil, fmt.Errorf("image: %s twice", hdr.Name)
		}
		if files[hdr.Name], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("image: %s: %v", hdr.Name, err)
		}
	}
	var layout struct {
		ImageLayoutVersion string `json:"imageLayoutVersion"`
	}
	if err := strictJSON(files["oci-layout"], &layout); err != nil || layout.ImageLayoutVersion != "1.0.0" {
		return nil, fmt.Errorf("image: oci-layout: want imageLayoutVersion 1.0.0 (%v)", err)
	}
	used := map[string]bool{}
	blob := func(d Descriptor, mediaType string, into any) ([]byte, error) {
		if d.MediaType != mediaType {
			return nil, fmt.Errorf("image: %s: media type %q, want %q", d.Digest, d.MediaType, mediaType)
		}
		hexSum, ok := strings.CutPrefix(d.Digest, "sha256:")
		b, found := files["blobs/sha256/"+hexSum]
		if !ok || !found {
			return nil, fmt.Errorf("image: no blob %s", d.Digest)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != hexSum || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("image: blob %s: sha256 %x, %d bytes; the descriptor says %d", d.Digest, sum, len(b), d.Size)
		}
		used["blobs/sha256/"+hexSum] = true
		if into != nil {
			return b, strictJSON(b, into)
		}
		return b, nil
	}
	var top ImageIndex
	if err := strictJSON(files["index.json"], &top); err != nil {
		return nil, fmt.Errorf("image: index.json: %v", err)
	}
	if top.SchemaVersion != 2 || top.MediaType != MediaTypeIndex || len(top.Manifests) != 1 {
		return nil, fmt.Errorf("image: index.json: want schema 2, %s, one image index; got %d, %q, %d", MediaTypeIndex, top.SchemaVersion, top.MediaType, len(top.Manifests))
	}
	img := &Image{Ref: top.Manifests[0].Annotations["org.opencontainers.image.ref.name"]}
	if _, err := blob(top.Manifests[0], MediaTypeIndex, &img.Index); err != nil {
		return nil, err
	}
	if img.Index.SchemaVersion != 2 || img.Index.MediaType != MediaTypeIndex || len(img.Index.Manifests) == 0 {
		return nil, fmt.Errorf("image: the image index: want schema 2, %s, manifests", MediaTypeIndex)
	}
	for _, d := range img.Index.Manifests {
		pi, err := readPlatformImage(d, blob)
		if err != nil {
			return nil, err
		}
		img.Platforms = append(img.Platforms, *pi)
	}
	used["index.json"], used["oci-layout"] = true, true
	for name := range files {
		if !used[name] {
			return nil, fmt.Errorf("image: %s: nothing points at it", name)
		}
	}
	return img, nil
}

func readPlatformImage(d Descriptor, blob func(Descriptor, string, any) ([]byte, error)) (*PlatformImage, error) {
	if d.Platform == nil {
		return nil, fmt.Errorf("image: manifest %s has no platform", d.Digest)
	}
	pi := &PlatformImage{Platform: *d.Platform}
	if _, err := blob(d, MediaTypeManifest, &pi.Manifest); err != nil {
		return nil, err
	}
	if pi.Manifest.SchemaVersion != 2 || pi.Manifest.MediaType != MediaTypeManifest || len(pi.Manifest.Layers) != 1 {
		return nil, fmt.Errorf("image: manifest %s: want schema 2, %s, one layer", d.Digest, MediaTypeManifest)
	}
	if _, err := blob(pi.Manifest.Config, MediaTypeConfig, &pi.Config); err != nil {
		return nil, err
	}
	c := pi.Config
	if (ImagePlatform{c.Architecture, c.OS, c.Variant}) != pi.Platform {
		return nil, fmt.Errorf("image: manifest %s: platform %+v, its config says %s/%s/%s", d.Digest, pi.Platform, c.OS, c.Architecture, c.Variant)
	}
	layer, err := blob(pi.Manifest.Layers[0], MediaTypeLayer, nil)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		return nil, fmt.Errorf("image: layer %s: %v", pi.Manifest.Layers[0].Digest, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("image: layer %s: %v", pi.Manifest.Layers[0].Digest, err)
	}
	sum := sha256.Sum256(raw)
	if c.RootFS.Type != "layers" || len(c.RootFS.DiffIDs) != 1 || c.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		return nil, fmt.Errorf("image: config of %s: rootfs %+v, the layer's tar is sha256:%x", pi.Platform.Architecture, c.RootFS, sum)
	}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return pi, nil
		}
		if err != nil {
			return nil, fmt.Errorf("image: layer of %s: %v", pi.Platform.Architecture, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("image: layer of %s: %v", pi.Platform.Architecture, err)
		}
		pi.Files = append(pi.Files, ImageFileEntry{hdr, data})
	}
}

// strictJSON decodes one JSON value with no field the type lacks.
func strictJSON(b []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}
