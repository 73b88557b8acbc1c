/* ofi_mr.c: memory registrations and their keys. A key is what an outsider
 * who reaches an endpoint needs to touch memory, so:
 *  - every key this PE requests is 64 random bits from getrandom, masked to
 *    the provider's key size, never in 0..SHOAL_OFI_KEY_MIN and never equal
 *    to an earlier one (so two segments' keys cannot collide); under
 *    FI_MR_PROV_KEY the provider's own keys are used;
 *  - keys travel only in the bootstrap allgather (ofi.c);
 *  - the static segment is registered as up to three regions so that its
 *    read-only (RELRO) span is registered for remote reads only: the target's
 *    provider refuses a write there instead of the PE faulting. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "transport/ofi/ofi.h"
#include "util/log.h"

/* Small numbers are what a guesser tries first; none is ever a key. */
#define SHOAL_OFI_KEY_MIN 64
#define KEY_TRIES 16

static shoal_status_t random_key(uint64_t *out)
{
    size_t bits = shoal_ofi.info->domain_attr->mr_key_size * 8;
    uint64_t mask = bits >= 64 || bits == 0 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
    for (int tries = 0; tries < KEY_TRIES; tries++) {
        uint64_t k;
        ssize_t n = getrandom(&k, sizeof k, 0);
        if (n != (ssize_t)sizeof k) {
            shoal_error("ofi", "getrandom for a memory key failed: %s", n < 0 ? strerror(errno) : "short read");
            return SHOAL_ERR_SYS;
        }
        k &= mask;
        int used = k <= SHOAL_OFI_KEY_MIN;
        for (int i = 0; i < shoal_ofi.n_keys && !used; i++) used = shoal_ofi.keys[i] == k;
        if (!used) {
            *out = k;
            return SHOAL_OK;
        }
    }
    shoal_error("ofi", "no fresh memory key after %d random draws (key size %zu bits)", KEY_TRIES, bits);
    return SHOAL_ERR_SYS;
}

static void remember_key(uint64_t key)
{
    if (shoal_ofi.n_keys < (int)(sizeof shoal_ofi.keys / sizeof shoal_ofi.keys[0]))
        shoal_ofi.keys[shoal_ofi.n_keys++] = key;
}

shoal_status_t shoal_ofi_mr_reg(void *buf, size_t len, uint64_t access, struct fid_ep *ep, struct fid_mr **out)
{
    int ret = -FI_ENOKEY;
    pthread_mutex_lock(&shoal_ofi.key_lock);
    for (int tries = 0; tries < KEY_TRIES && ret == -FI_ENOKEY; tries++) {
        uint64_t key = 0; /* ignored under FI_MR_PROV_KEY */
        if (!shoal_ofi.prov_key && random_key(&key) != SHOAL_OK) {
            pthread_mutex_unlock(&shoal_ofi.key_lock);
            return SHOAL_ERR_SYS;
        }
        ret = fi_mr_reg(shoal_ofi.domain, buf, len, access, 0, key, 0, out, NULL);
        if (ret == 0 || ret == -FI_ENOKEY) remember_key(key); /* in use somewhere: skip it too */
        if (shoal_ofi.prov_key) break;
    }
    pthread_mutex_unlock(&shoal_ofi.key_lock);
    if (ret) return shoal_ofi_fail("fi_mr_reg", ret);
    if (shoal_ofi.mr_endpoint) {
        ret = fi_mr_bind(*out, &ep->fid, 0);
        if (ret == 0) ret = fi_mr_enable(*out);
        if (ret) {
            fi_close(&(*out)->fid);
            *out = NULL;
            return shoal_ofi_fail("fi_mr_bind/fi_mr_enable", ret);
        }
    }
    return SHOAL_OK;
}

/* Splits seg into [0, ro) [ro, ro_end) [ro_end, size), empty ones skipped. */
static int plan_regions(const shoal_segment_t *seg, struct shoal_ofi_region r[SHOAL_OFI_REGIONS])
{
    size_t ro = seg->ro_offset, ro_end = seg->ro_offset + seg->ro_len;
    if (ro > seg->size) ro = seg->size;
    if (ro_end > seg->size || ro_end < ro) ro_end = seg->size;
    if (!seg->ro_len) ro = ro_end = seg->size;
    const size_t cut[4] = {0, ro, ro_end, seg->size};
    int n = 0;
    for (int i = 0; i < 3; i++) {
        if (cut[i + 1] == cut[i]) continue;
        r[n] = (struct shoal_ofi_region){.offset = cut[i], .len = cut[i + 1] - cut[i], .ro = i == 1};
        n++;
    }
    return n;
}

shoal_status_t shoal_ofi_register_segments(const struct shoal_transport_setup *setup)
{
    const int virt = (shoal_ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    for (int s = 0; s < SHOAL_SEG_COUNT; s++) {
        const shoal_segment_t *seg = setup->local[s];
        shoal_ofi.local_base[s] = seg ? seg->base : NULL;
        shoal_ofi.local_size[s] = seg ? seg->size : 0;
        if (!shoal_ofi.local_size[s]) continue; /* absent static data */
        struct shoal_ofi_region *r = shoal_ofi.region[s];
        int n = plan_regions(seg, r);
        for (int i = 0; i < n; i++) {
            /* Local access stays full: the read-only span may be a put's source. */
            uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | (r[i].ro ? 0 : FI_REMOTE_WRITE);
            shoal_status_t st = shoal_ofi_mr_reg(seg->base + r[i].offset, r[i].len, access, shoal_ofi.dflt.ep,
                                                 &shoal_ofi.mr[s][i]);
            if (st != SHOAL_OK) return st;
            shoal_ofi.desc[s][i] = fi_mr_desc(shoal_ofi.mr[s][i]);
            r[i].key = fi_mr_key(shoal_ofi.mr[s][i]);
            r[i].base = virt ? (uint64_t)(uintptr_t)(seg->base + r[i].offset) : 0;
        }
    }
    /* Provider keys are unique by contract; ours are by construction. Check
     * anyway: two equal keys would let a write to one reach the other. */
    for (int a = 0; a < SHOAL_SEG_COUNT * SHOAL_OFI_REGIONS; a++)
        for (int b = a + 1; b < SHOAL_SEG_COUNT * SHOAL_OFI_REGIONS; b++) {
            const struct shoal_ofi_region *x = &shoal_ofi.region[0][0] + a, *y = &shoal_ofi.region[0][0] + b;
            if (x->len && y->len && x->key == y->key) {
                shoal_error("ofi", "two registrations got the same key 0x%llx from provider %s",
                            (unsigned long long)x->key, shoal_ofi.info->fabric_attr->prov_name);
                return SHOAL_ERR_SYS;
            }
        }
    return SHOAL_OK;
}

void shoal_ofi_deregister_segments(void)
{
    for (int s = 0; s < SHOAL_SEG_COUNT; s++)
        for (int i = 0; i < SHOAL_OFI_REGIONS; i++) {
            if (!shoal_ofi.mr[s][i]) continue;
            int ret = fi_close(&shoal_ofi.mr[s][i]->fid);
            if (ret) shoal_ofi_fail("fi_close(mr)", ret);
            shoal_ofi.mr[s][i] = NULL;
        }
}

const struct shoal_ofi_region *shoal_ofi_remote_region(int pe, enum shoal_segment_id seg, size_t offset)
{
    const struct shoal_ofi_region *r =
        &shoal_ofi.remote[((size_t)pe * SHOAL_SEG_COUNT + (size_t)seg) * SHOAL_OFI_REGIONS];
    for (int i = 0; i < SHOAL_OFI_REGIONS; i++)
        if (r[i].len && offset >= r[i].offset && offset - r[i].offset < r[i].len) return &r[i];
    return NULL;
}
