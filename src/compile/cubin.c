/*
 * cubin.c - a bounds-checked reader of the ELF64 cubins NVRTC produces.
 */
#include "compile/cubin.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EIATTR_FRAME_SIZE  0x11
#define EIATTR_REGCOUNT    0x2f
#define EIFMT_SVAL         4
#define SHT_SYMTAB         2
#define SHT_NOBITS         8
#define RESERVED_SMEM_SM90 1024u

typedef struct elf {
    const unsigned char *p;
    size_t size;
    uint64_t shoff;
    unsigned shnum, shentsize, shstrndx;
    char *why;
    size_t why_size;
} elf;

typedef struct section {
    const char *name;
    unsigned type;
    uint64_t offset, size;
    unsigned link;
    uint64_t entsize;
} section;

static uint64_t rd(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

static int fail(elf *e, const char *msg)
{
    snprintf(e->why, e->why_size, "malformed cubin: %s", msg);
    return -1;
}

static int in_bounds(const elf *e, uint64_t off, uint64_t len)
{
    return off <= e->size && len <= e->size - off;
}

static int open_elf(elf *e, const void *data, size_t size, char *why, size_t why_size)
{
    e->p = data;
    e->size = size;
    e->why = why;
    e->why_size = why_size;
    if (size < 64
        || memcmp(e->p,
                  "\x7f"
                  "ELF",
                  4)
               != 0)
        return fail(e, "not an ELF file");
    if (e->p[4] != 2 || e->p[5] != 1)
        return fail(e, "not a little-endian ELF64 file");
    e->shoff = rd(e->p + 0x28, 8);
    e->shentsize = (unsigned)rd(e->p + 0x3a, 2);
    e->shnum = (unsigned)rd(e->p + 0x3c, 2);
    e->shstrndx = (unsigned)rd(e->p + 0x3e, 2);
    if (e->shentsize < 64 || !in_bounds(e, e->shoff, (uint64_t)e->shnum * e->shentsize))
        return fail(e, "section headers out of bounds");
    if (e->shstrndx >= e->shnum)
        return fail(e, "bad section-name table index");
    return 0;
}

/* Section i, with its name resolved; -1 when out of bounds. */
static int get_section(elf *e, unsigned i, section *s)
{
    const unsigned char *h = e->p + e->shoff + (uint64_t)i * e->shentsize;
    const unsigned char *sh = e->p + e->shoff + (uint64_t)e->shstrndx * e->shentsize;
    uint64_t str_off = rd(sh + 24, 8), str_size = rd(sh + 32, 8), name = rd(h, 4);
    if (!in_bounds(e, str_off, str_size) || name >= str_size)
        return fail(e, "section name out of bounds");
    s->name = (const char *)e->p + str_off + name;
    if (!memchr(s->name, '\0', str_size - name))
        return fail(e, "unterminated section name");
    s->type = (unsigned)rd(h + 4, 4);
    s->offset = rd(h + 24, 8);
    s->size = rd(h + 32, 8);
    s->link = (unsigned)rd(h + 40, 4);
    s->entsize = rd(h + 56, 8);
    if (s->type != SHT_NOBITS && !in_bounds(e, s->offset, s->size))
        return fail(e, "section data out of bounds");
    return 0;
}

static int find_section(elf *e, const char *name, section *out)
{
    for (unsigned i = 0; i < e->shnum; ++i) {
        if (get_section(e, i, out))
            return -1;
        if (strcmp(out->name, name) == 0)
            return 1;
    }
    return 0;
}

/* Index and value of the symbol named `name` (value and section index of
 * its definition); returns 1 found, 0 not found, -1 malformed. */
static int find_symbol(elf *e, const char *name, unsigned *index, uint64_t *value, unsigned *shndx, uint64_t *size)
{
    section symtab, strtab;
    int found = 0;
    for (unsigned i = 0; i < e->shnum && !found; ++i) {
        if (get_section(e, i, &symtab))
            return -1;
        found = symtab.type == SHT_SYMTAB;
    }
    if (!found)
        return fail(e, "no symbol table");
    if (symtab.entsize < 24 || symtab.link >= e->shnum || get_section(e, symtab.link, &strtab))
        return fail(e, "bad symbol table");
    for (uint64_t k = 0; k < symtab.size / symtab.entsize; ++k) {
        const unsigned char *s = e->p + symtab.offset + k * symtab.entsize;
        uint64_t n = rd(s, 4);
        if (n >= strtab.size)
            return fail(e, "symbol name out of bounds");
        const char *sname = (const char *)e->p + strtab.offset + n;
        if (strncmp(sname, name, strtab.size - n) == 0 && memchr(sname, '\0', strtab.size - n)) {
            *index = (unsigned)k;
            *value = rd(s + 8, 8);
            *shndx = (unsigned)rd(s + 6, 2);
            *size = rd(s + 16, 8);
            return 1;
        }
    }
    return 0;
}

int fattn_cubin_parse(const void *data, size_t size, const char *kernel, fattn_cubin_info *out, char *why,
                      size_t why_size)
{
    elf e;
    section s;
    unsigned sym;
    uint64_t value, symsize;
    unsigned shndx;
    char name[256];

    memset(out, 0, sizeof *out);
    if (open_elf(&e, data, size, why, why_size))
        return -1;
    out->sm = (int)((rd(e.p + 0x30, 4) >> 8) & 0xff);

    int r = find_symbol(&e, kernel, &sym, &value, &shndx, &symsize);
    if (r <= 0)
        return r < 0 ? -1 : (snprintf(why, why_size, "cubin has no kernel named %s", kernel), -1);

    if ((r = find_section(&e, ".nv.info", &s)) < 0)
        return -1;
    for (uint64_t off = 0; r && off + 4 <= s.size;) {
        const unsigned char *rec = e.p + s.offset + off;
        unsigned fmt = rec[0], attr = rec[1], len = (unsigned)rd(rec + 2, 2);
        if (fmt != EIFMT_SVAL) {
            off += 4;
            continue;
        }
        if (off + 4 + len > s.size)
            return fail(&e, ".nv.info record out of bounds");
        if (len >= 8 && rd(rec + 4, 4) == sym) {
            if (attr == EIATTR_REGCOUNT) {
                out->regs = (unsigned)rd(rec + 8, 4);
                out->have_regs = 1;
            } else if (attr == EIATTR_FRAME_SIZE) {
                out->frame_bytes = (unsigned)rd(rec + 8, 4);
            }
        }
        off += 4 + len;
    }
    if (!out->have_regs)
        return fail(&e, "no register count for the kernel in .nv.info");

    snprintf(name, sizeof name, ".nv.shared.%s", kernel);
    if ((r = find_section(&e, name, &s)) < 0)
        return -1;
    out->smem_section = r ? (unsigned)s.size : 0;
    unsigned rs;
    uint64_t rv, rsize;
    unsigned rshndx;
    if ((r = find_symbol(&e, ".nv.reservedSmem.offset0", &rs, &rv, &rshndx, &rsize)) < 0)
        return -1;
    out->reserved_smem = r == 1;
    out->smem_static = out->smem_section;
    if (out->reserved_smem && out->smem_static >= RESERVED_SMEM_SM90)
        out->smem_static -= RESERVED_SMEM_SM90;
    return 0;
}

int fattn_cubin_symbol_u32(const void *data, size_t size, const char *symbol, unsigned *value, char *why,
                           size_t why_size)
{
    elf e;
    section s;
    unsigned sym, shndx;
    uint64_t v, symsize;
    if (open_elf(&e, data, size, why, why_size))
        return -1;
    int r = find_symbol(&e, symbol, &sym, &v, &shndx, &symsize);
    if (r <= 0)
        return r < 0 ? -1 : (snprintf(why, why_size, "cubin has no symbol %s", symbol), 1);
    if (shndx == 0 || shndx >= e.shnum || symsize != 4 || get_section(&e, shndx, &s))
        return fail(&e, "symbol is not a 4-byte initialized object");
    if (s.type == SHT_NOBITS || v > s.size || s.size - v < 4)
        return fail(&e, "symbol data out of bounds");
    *value = (unsigned)rd(e.p + s.offset + v, 4);
    return 0;
}
