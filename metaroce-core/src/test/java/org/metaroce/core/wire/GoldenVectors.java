// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Loads the golden vectors of specification section 3.8 from {@code spec-notes/vectors}. */
final class GoldenVectors {
    /** One vector: the packet bytes and the fields they decode to. */
    record Vector(String name, String opcode, byte[] bytes, Map<String, String> fields, List<String> requirements) {
        @Override
        public String toString() {
            return name;
        }
    }

    private GoldenVectors() {
    }

    static Path repoRoot() {
        final String configured = System.getProperty("metaroce.repo.root");
        if (configured != null && Files.isDirectory(Paths.get(configured, "spec-notes"))) {
            return Paths.get(configured);
        }
        Path dir = Paths.get("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("spec-notes"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("cannot find the repository root (a directory holding spec-notes/)");
        }
        return dir;
    }

    static Path directory() {
        return repoRoot().resolve("spec-notes").resolve("vectors");
    }

    static List<Vector> load() {
        final ObjectMapper mapper = new ObjectMapper();
        final List<Vector> vectors = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory())) {
            for (final Path file : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                final JsonNode root = mapper.readTree(file.toFile());
                final Map<String, String> fields = new LinkedHashMap<>();
                for (final Map.Entry<String, JsonNode> e : root.get("fields").properties()) {
                    fields.put(e.getKey(), e.getValue().asText());
                }
                final List<String> requirements = new ArrayList<>();
                root.get("requirements").forEach(n -> requirements.add(n.asText()));
                vectors.add(new Vector(root.get("name").asText(), root.get("opcode").asText(),
                    HexFormat.of().parseHex(root.get("hex").asText()), fields, requirements));
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        if (vectors.isEmpty()) {
            throw new IllegalStateException("no vectors found in " + directory());
        }
        return vectors;
    }
}
