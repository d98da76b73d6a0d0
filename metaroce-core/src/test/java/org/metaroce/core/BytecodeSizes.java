// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.TreeMap;

/**
 * How many bytes of bytecode each method of a class has (the {@code code_length} of its
 * {@code Code} attribute, JVMS 4.7.3): the size HotSpot's inlining limits are measured in. Read
 * from the class file directly, as {@link ClassGraph} reads the constant pool; no library.
 */
public final class BytecodeSizes {
    private BytecodeSizes() {
    }

    /**
     * @param type a class whose class file is on the class path (a nested class is read from its own file)
     * @return for each method name, the largest code length among its overloads; abstract and
     *     native methods are absent
     * @throws IOException if the class file cannot be read or is not one
     */
    public static Map<String, Integer> of(final Class<?> type) throws IOException {
        final String file = type.getName().substring(type.getName().lastIndexOf('.') + 1) + ".class";
        try (InputStream stream = type.getResourceAsStream(file)) {
            if (stream == null) {
                throw new IOException("no class file " + file + " next to " + type.getName());
            }
            return read(new DataInputStream(stream));
        }
    }

    private static Map<String, Integer> read(final DataInputStream in) throws IOException {
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort(); // minor
        in.readUnsignedShort(); // major
        final String[] utf8 = ConstantPool.read(in, index -> { });
        in.readUnsignedShort(); // access flags
        in.readUnsignedShort(); // this class
        in.readUnsignedShort(); // super class
        skip(in, 2 * in.readUnsignedShort()); // interfaces
        final int fields = in.readUnsignedShort();
        for (int i = 0; i < fields; i++) {
            skip(in, 6); // access flags, name, descriptor
            skipAttributes(in);
        }
        final Map<String, Integer> sizes = new TreeMap<>();
        final int methods = in.readUnsignedShort();
        for (int i = 0; i < methods; i++) {
            in.readUnsignedShort(); // access flags
            final String name = utf8[in.readUnsignedShort()];
            in.readUnsignedShort(); // descriptor
            final int attributes = in.readUnsignedShort();
            for (int a = 0; a < attributes; a++) {
                final String attribute = utf8[in.readUnsignedShort()];
                final int length = in.readInt();
                if (attribute.equals("Code")) {
                    in.readUnsignedShort(); // max stack
                    in.readUnsignedShort(); // max locals
                    final int codeLength = in.readInt();
                    sizes.merge(name, codeLength, Math::max);
                    skip(in, length - 8);
                } else {
                    skip(in, length);
                }
            }
        }
        return sizes;
    }

    private static void skipAttributes(final DataInputStream in) throws IOException {
        final int attributes = in.readUnsignedShort();
        for (int a = 0; a < attributes; a++) {
            in.readUnsignedShort(); // name
            skip(in, in.readInt());
        }
    }

    private static void skip(final DataInputStream in, final int bytes) throws IOException {
        in.readNBytes(bytes);
    }
}
