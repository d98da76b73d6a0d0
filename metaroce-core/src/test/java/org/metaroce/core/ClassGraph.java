// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Which top-level classes of one package use which others, read from the compiled class files:
 * the {@code CONSTANT_Class} entries of each file's constant pool (what it instantiates, calls,
 * casts to, reads fields of) and the class names in its descriptors and signatures (field,
 * parameter and return types). A nested class counts as its top-level class, so a cycle through
 * a listener or a record inside a class is the top-level class's. No library: the class-file
 * format's constant pool (JVMS 4.4) is read directly.
 *
 * <p>The classes a multi-release jar keeps for newer JDKs ({@code META-INF/versions}) count too.
 * Shared through the core's test-jar: the driver's {@code ClassCycleTest} reads its package with
 * it.
 */
public final class ClassGraph {
    private static final Pattern DESCRIPTOR_CLASS = Pattern.compile("L([\\w/$]+)[;<]");

    private ClassGraph() {
    }

    /**
     * @param member a class of the module
     * @return the directory of the module's compiled classes ({@code target/classes})
     * @throws IllegalStateException if the classes are not in a directory: the tests read class
     *     files, so they run from the build, not from a jar
     */
    public static Path classesDirectory(final Class<?> member) {
        final Path p;
        try {
            p = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (final URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
        if (!Files.isDirectory(p)) {
            throw new IllegalStateException("the classes of " + member.getName() + " are not a directory (run from "
                + "the build): " + p);
        }
        return p;
    }

    /**
     * @param classes the directory of compiled classes (the module's {@code target/classes})
     * @param packageName e.g. {@code org.metaroce.core.engine}
     * @return for each top-level class of the package (simple name), the others of the package it uses
     */
    public static Map<String, Set<String>> of(final Path classes, final String packageName) throws IOException {
        final String internal = packageName.replace('.', '/');
        final Map<String, Set<String>> uses = new TreeMap<>();
        add(classes.resolve(internal), internal, uses);
        // Classes compiled for newer JDKs (src/main/java22, built by a JDK 22+ build) count too:
        // the union of both versions' dependencies, the stricter reading.
        final Path versions = classes.resolve("META-INF/versions");
        if (Files.isDirectory(versions)) {
            try (Stream<Path> releases = Files.list(versions)) {
                for (final Path release : (Iterable<Path>) releases::iterator) {
                    if (Files.isDirectory(release.resolve(internal))) {
                        add(release.resolve(internal), internal, uses);
                    }
                }
            }
        }
        return uses;
    }

    /**
     * Which packages under a root use which others of them: the same reading as {@link #of}, one
     * level up, for a module whose packages must form no cycle (the simulator's). Classes for newer
     * JDKs ({@code META-INF/versions}) are not read: no module with such classes asks this.
     *
     * @param classes the directory of compiled classes (the module's {@code target/classes})
     * @param rootPackage e.g. {@code org.metaroce.sim}; it and every package below it count
     * @return for each package with classes (full name), the other packages under the root it uses
     */
    public static Map<String, Set<String>> packages(final Path classes, final String rootPackage) throws IOException {
        final String root = rootPackage.replace('.', '/');
        final Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(classes.resolve(root))) {
            for (final Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                final String from = classes.relativize(file.getParent()).toString().replace('\\', '/');
                final Set<String> used = uses.computeIfAbsent(from.replace('/', '.'), k -> new TreeSet<>());
                try (InputStream in = Files.newInputStream(file)) {
                    for (final String referenced : referencedClasses(in)) {
                        final int slash = referenced.lastIndexOf('/');
                        final String to = slash > 0 ? referenced.substring(0, slash) : "";
                        if (!to.equals(from) && (to.equals(root) || to.startsWith(root + "/"))) {
                            used.add(to.replace('/', '.'));
                        }
                    }
                }
            }
        }
        return uses;
    }

    private static void add(final Path dir, final String internal, final Map<String, Set<String>> uses)
        throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (final Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                final String name = file.getFileName().toString().replace(".class", "");
                if (name.equals("package-info") || name.equals("module-info")) {
                    continue;
                }
                final String from = topLevel(name);
                final Set<String> used = uses.computeIfAbsent(from, k -> new TreeSet<>());
                try (InputStream in = Files.newInputStream(file)) {
                    for (final String referenced : referencedClasses(in)) {
                        final int slash = referenced.lastIndexOf('/');
                        if (slash > 0 && referenced.substring(0, slash).equals(internal)) {
                            final String to = topLevel(referenced.substring(slash + 1));
                            if (!to.equals(from)) {
                                used.add(to);
                            }
                        }
                    }
                }
            }
        }
    }

    /**
     * @return the strongly connected components with more than one class, each sorted, in order
     *     of their first class: every class in one of them is on a dependency cycle
     */
    public static List<Set<String>> cycles(final Map<String, Set<String>> uses) {
        final Tarjan t = new Tarjan(uses);
        for (final String v : uses.keySet()) {
            if (!t.index.containsKey(v)) {
                t.visit(v);
            }
        }
        t.found.sort((a, b) -> a.iterator().next().compareTo(b.iterator().next()));
        return t.found;
    }

    /** Tarjan's algorithm for strongly connected components. */
    private static final class Tarjan {
        final Map<String, Set<String>> uses;
        final Map<String, Integer> index = new HashMap<>();
        final Map<String, Integer> low = new HashMap<>();
        final Deque<String> stack = new ArrayDeque<>();
        final Set<String> onStack = new TreeSet<>();
        final List<Set<String>> found = new ArrayList<>();

        Tarjan(final Map<String, Set<String>> uses) {
            this.uses = uses;
        }

        void visit(final String v) {
            index.put(v, index.size());
            low.put(v, index.get(v));
            stack.push(v);
            onStack.add(v);
            for (final String w : uses.getOrDefault(v, Set.of())) {
                if (!index.containsKey(w)) {
                    visit(w);
                    low.put(v, Math.min(low.get(v), low.get(w)));
                } else if (onStack.contains(w)) {
                    low.put(v, Math.min(low.get(v), index.get(w)));
                }
            }
            if (low.get(v).equals(index.get(v))) {
                final Set<String> component = new TreeSet<>();
                String w;
                do {
                    w = stack.pop();
                    onStack.remove(w);
                    component.add(w);
                } while (!w.equals(v));
                if (component.size() > 1) {
                    found.add(component);
                }
            }
        }
    }

    private static String topLevel(final String simpleName) {
        final int dollar = simpleName.indexOf('$');
        return dollar < 0 ? simpleName : simpleName.substring(0, dollar);
    }

    /** @return the internal names (a/b/C) of the classes a class file refers to */
    private static Set<String> referencedClasses(final InputStream stream) throws IOException {
        final DataInputStream in = new DataInputStream(stream);
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort(); // minor
        in.readUnsignedShort(); // major
        final List<Integer> classNameIndexes = new ArrayList<>();
        final String[] utf8 = ConstantPool.read(in, classNameIndexes::add);
        final Set<String> names = new TreeSet<>();
        for (final int index : classNameIndexes) {
            final String name = utf8[index];
            // An array class is named by its descriptor ("[Lorg/...;"), found below.
            if (!name.startsWith("[")) {
                names.add(name);
            }
        }
        // Descriptors and signatures name the types of fields, parameters and results; a string
        // constant shaped like a descriptor would count too, which no class here has.
        for (final String s : utf8) {
            if (s != null && s.indexOf('L') >= 0) {
                final Matcher m = DESCRIPTOR_CLASS.matcher(s);
                while (m.find()) {
                    names.add(m.group(1));
                }
            }
        }
        return names;
    }
}
