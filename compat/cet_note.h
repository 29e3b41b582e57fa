/*
 * For the assembly files of the ABI layer: marks the object as compatible
 * with Intel CET, indirect branch tracking and shadow stacks (the x86 feature
 * property GNU_PROPERTY_X86_FEATURE_1_AND with IBT | SHSTK). The linker keeps
 * a property only where every object has it, so without this note a build
 * with -fcf-protection would lose it on account of these files. Their every
 * target of an indirect jump begins with endbr64, and they return only where
 * they were called.
 */
    .section .note.gnu.property,"a"
    .p2align 3
    .long 1f - 0f /* name size */
    .long 4f - 1f /* descriptor size */
    .long 5       /* NT_GNU_PROPERTY_TYPE_0 */
0:  .asciz "GNU"
1:  .p2align 3
    .long 0xc0000002 /* GNU_PROPERTY_X86_FEATURE_1_AND */
    .long 3f - 2f
2:  .long 0x3 /* IBT | SHSTK */
3:  .p2align 3
4:
