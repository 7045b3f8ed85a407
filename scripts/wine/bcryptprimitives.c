/*
 * ProcessPrng, the one function of bcryptprimitives.dll that Rust's standard library (1.78 and
 * later) imports on Windows for its random numbers (HashMap keys). Wine 8 (Debian 12's) has no
 * bcryptprimitives.dll, so every Rust program fails to load under it; Wine 9.1 added one. This
 * stand-in is built with MinGW by scripts/wine.sh into the test prefix only, never shipped:
 * Windows itself has the real DLL since Windows 10.
 *
 * It answers from RtlGenRandom (advapi32's SystemFunction036), Wine's system random source.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG chunk = size > 0x10000000 ? 0x10000000 : (ULONG)size;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
