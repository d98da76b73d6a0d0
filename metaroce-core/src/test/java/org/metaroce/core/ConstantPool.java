// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.function.IntConsumer;

/**
 * Reads a class file's constant pool (JVMS 4.4), for the tests that read class files directly
 * ({@link ClassGraph}, {@link BytecodeSizes}); no library.
 */
final class ConstantPool {
    private ConstantPool() {
    }

    /**
     * Reads the constant pool from {@code in}, positioned after the magic number and version.
     *
     * @param classNameIndex receives the name index of each Class entry
     * @return the Utf8 entries by index (null elsewhere)
     * @throws IOException on an unknown tag or a read error
     */
    static String[] read(final DataInputStream in, final IntConsumer classNameIndex) throws IOException {
        final int count = in.readUnsignedShort();
        final String[] utf8 = new String[count];
        for (int i = 1; i < count; i++) {
            final int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF(); // Utf8: u2 length and modified UTF-8, as readUTF reads
                case 7 -> classNameIndex.accept(in.readUnsignedShort()); // Class
                case 8, 16, 19, 20 -> in.readUnsignedShort(); // String, MethodType, Module, Package
                case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt(); // Integer, Float, refs, NameAndType, (Invoke)Dynamic
                case 5, 6 -> { // Long, Double take two entries
                    in.readLong();
                    i++;
                }
                case 15 -> { // MethodHandle
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                default -> throw new IOException("unknown constant-pool tag " + tag + " at entry " + i);
            }
        }
        return utf8;
    }
}
