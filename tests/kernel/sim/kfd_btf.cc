// kfd_btf: the KFD simulator's link to the real amdgpu.ko of the kernel it
// runs on (tests/kernel/run_sim_tier.sh). Test-only, host-side.
//
//   kfd_btf header VMLINUX_BTF AMDGPU_BTF
//       The amdkfd facts the simulator takes from the real module instead of
//       declaring them itself (kfd_sim_btf.h, included by kfd_sim.h): the
//       enums gpuq reads or the simulator numbers by (kfd_queue_type,
//       kfd_queue_format, kfd_unmap_queues_filter, kfd_sched_policy) with
//       their real values, a KFD_SIM_HAS_<ENUMERATOR> per enumerator, the
//       queue-type labels gpuq exports, derived from the enumerator names,
//       and a KFD_SIM_HAS_<STRUCT>_<FIELD> for the fields that come and go
//       between kernels (kfd_process.context_id, 7.2+; amdgpu_gmc.xnack_flags,
//       6.16+).
//
//   kfd_btf describe BPF_OBJECT VMLINUX_BTF MODULE_BTF [MODULE_BASE_BTF]
//       What gpuq's BPF object reads of amdkfd, as MODULE_BTF presents it:
//       one line per field of every amdkfd struct the object declares for
//       CO-RE (its kind: the int's size and sign, the enum's or pointee's
//       name; or "absent"), and one per enumerator of every amdkfd enum it
//       reads. run_sim_tier.sh compares the lines of the simulator's module
//       with those of the real amdgpu.ko: they must be equal.
//
//   kfd_btf layout BPF_OBJECT VMLINUX_BTF MODULE_BTF [MODULE_BASE_BTF]
//       As describe, with each field's byte offset: for layouts that claim
//       the real offsets (the host BPF tests'), not for the simulator (built
//       from its own structs, whose offsets CO-RE makes irrelevant).
//
//   kfd_btf standalone VMLINUX_BTF AMDGPU_BTF OUT [STRUCT.FIELD]
//       VMLINUX_BTF and the amdgpu BTF split over it, written to OUT as one
//       BTF whole on its own: what libbpf's btf_custom_path takes, so the
//       host BPF tests verify gpuq's programs against a real kernel's
//       amdkfd on a host without amdgpu. With STRUCT.FIELD that member of
//       that amdkfd struct gets a type of another kind (an int becomes a
//       struct, anything else a 4-byte unsigned int): the negative controls,
//       whose read libbpf must refuse to relocate.
//
// MODULE_BTF and AMDGPU_BTF are a module's .BTF (raw, or the .ko itself),
// split over VMLINUX_BTF, or over MODULE_BASE_BTF: the .BTF.base section of
// an out-of-tree module built by 6.12+'s kbuild (pahole's distilled base,
// which the kernel relocates onto its own vmlinux BTF at load). MODULE_BASE_BTF
// "standalone": MODULE_BTF is whole on its own, as the file `standalone`
// writes, which tests/bpf/layout_btf_test.sh describes beside the split
// BTF it is made of.
// Exit 0, or 1 with one line on stderr.
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace
{

// "kfd_node___v6_5" -> "kfd_node": libbpf's essential name (CO-RE flavors).
std::string Essential(const char *name)
{
	const char *flavor = std::strstr(name, "___");
	return flavor == nullptr ? name : std::string(name, flavor - name);
}

const char *Name(const btf *b, __u32 off)
{
	const char *name = btf__name_by_offset(b, off);
	return name == nullptr ? "" : name;
}

// The index of struct `t`'s member named `field`, else -1.
int MemberIndex(const btf *b, const btf_type *t, const std::string &field)
{
	for (int i = 0; i < btf_vlen(t); ++i) {
		if (field == Name(b, btf_members(t)[i].name_off))
			return i;
	}
	return -1;
}

// The type `id` names, without typedefs and qualifiers.
int Resolve(const btf *b, int id)
{
	while (id > 0) {
		const btf_type *t = btf__type_by_id(b, id);
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			return id;
		}
	}
	return id;
}

// One type as CO-RE compares it: "int 4 unsigned", "enum kfd_queue_type",
// "ptr struct kfd_process", "struct mmu_notifier", "array 64 ptr ...".
std::string Describe(const btf *b, int id)
{
	id = Resolve(b, id);
	if (id == 0)
		return "void";
	const btf_type *t = btf__type_by_id(b, id);
	switch (btf_kind(t)) {
	case BTF_KIND_INT: {
		const __u32 enc = btf_int_encoding(t);
		return "int " + std::to_string(t->size) +
		       ((enc & BTF_INT_SIGNED) ? " signed" : " unsigned") +
		       ((enc & BTF_INT_BOOL) ? " bool" : "");
	}
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return "enum " + Essential(Name(b, t->name_off));
	case BTF_KIND_STRUCT:
		return "struct " + Essential(Name(b, t->name_off));
	case BTF_KIND_UNION:
		return "union " + Essential(Name(b, t->name_off));
	case BTF_KIND_FWD:
		return (btf_kflag(t) ? "union " : "struct ") + Essential(Name(b, t->name_off));
	case BTF_KIND_PTR: {
		// Pointers are compatible with any pointer for CO-RE; the pointee
		// still says what the field is.
		const int to = Resolve(b, t->type);
		if (to == 0)
			return "ptr void";
		const btf_type *p = btf__type_by_id(b, to);
		if (btf_kind(p) == BTF_KIND_FUNC_PROTO)
			return "ptr func";
		return "ptr " + Describe(b, to);
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		return "array " + std::to_string(a->nelems) + " " + Describe(b, a->type);
	}
	default:
		return "kind " + std::to_string(btf_kind(t));
	}
}

bool ReadBtf(const char *path, btf *base, btf **out)
{
	*out = base != nullptr ? btf__parse_split(path, base) : btf__parse(path, nullptr);
	if (libbpf_get_error(*out) != 0) {
		std::fprintf(stderr, "kfd_btf: cannot read BTF from %s\n", path);
		*out = nullptr;
		return false;
	}
	return true;
}

// The module's own type of that kind and essential name (not vmlinux's),
// else 0.
int ModuleType(const btf *module, const btf *base, const std::string &name, int kind)
{
	const int id = btf__find_by_name_kind(module, name.c_str(), kind);
	if (id <= 0 || id < static_cast<int>(btf__type_cnt(base)))
		return 0;
	return id;
}

std::string Upper(std::string s)
{
	for (char &c : s)
		c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
	return s;
}

std::string Lower(std::string s)
{
	for (char &c : s)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	return s;
}

int Header(const char *vmlinux_path, const char *amdgpu_path)
{
	btf *base = nullptr;
	btf *amdgpu = nullptr;
	if (!ReadBtf(vmlinux_path, nullptr, &base) || !ReadBtf(amdgpu_path, base, &amdgpu)) {
		return 1;
	}
	std::printf("/* Generated by kfd_btf header from %s (do not edit): the real\n"
		    " * amdgpu.ko's enums and field presence, kfd_btf.cc says why. */\n"
		    "#ifndef KFD_SIM_BTF_H\n#define KFD_SIM_BTF_H\n\n",
		    amdgpu_path);
	for (const char *name : { "kfd_queue_type", "kfd_queue_format", "kfd_unmap_queues_filter",
				  "kfd_sched_policy" }) {
		const int id = ModuleType(amdgpu, base, name, BTF_KIND_ENUM);
		if (id == 0) {
			std::fprintf(stderr, "kfd_btf: %s has no enum %s\n", amdgpu_path, name);
			return 1;
		}
		const btf_type *t = btf__type_by_id(amdgpu, id);
		const struct btf_enum *e = btf_enum(t);
		std::printf("enum %s {\n", name);
		for (int i = 0; i < btf_vlen(t); ++i) {
			std::printf("\t%s = %d,\n", Name(amdgpu, e[i].name_off), e[i].val);
		}
		std::printf("};\n");
		for (int i = 0; i < btf_vlen(t); ++i) {
			std::printf("#define KFD_SIM_HAS_%s 1\n", Name(amdgpu, e[i].name_off));
		}
		std::printf("\n");
		if (std::strcmp(name, "kfd_queue_type") != 0)
			continue;
		// The label gpuq exports for each: the enumerator's name, lowercased,
		// without the prefix (KFD_QUEUE_TYPE_SDMA_XGMI -> sdma_xgmi).
		std::printf("#define KFD_SIM_QUEUE_TYPE_LABELS \\\n");
		for (int i = 0; i < btf_vlen(t); ++i) {
			const std::string enumerator = Name(amdgpu, e[i].name_off);
			const std::string prefix = "KFD_QUEUE_TYPE_";
			if (enumerator.rfind(prefix, 0) != 0 || enumerator == prefix + "MAX") {
				continue;
			}
			std::printf("\t[%d] = \"%s\", \\\n", e[i].val,
				    Lower(enumerator.substr(prefix.size())).c_str());
		}
		std::printf("\n\n");
	}
	// Fields whose presence the simulator follows.
	const std::vector<std::pair<const char *, const char *>> fields = {
		{ "kfd_process", "context_id" }, { "amdgpu_gmc", "xnack_flags" }
	};
	for (const auto &[type, field] : fields) {
		const int id = ModuleType(amdgpu, base, type, BTF_KIND_STRUCT);
		if (id == 0)
			continue;
		if (MemberIndex(amdgpu, btf__type_by_id(amdgpu, id), field) >= 0) {
			std::printf("#define KFD_SIM_HAS_%s_%s 1\n", Upper(type).c_str(),
				    Upper(field).c_str());
		}
	}
	// Functions the simulator has where the real module has them.
	for (const char *fn : { "mes_v12_1_remove_hw_queue" }) {
		if (ModuleType(amdgpu, base, fn, BTF_KIND_FUNC) != 0) {
			std::printf("#define KFD_SIM_HAS_FUNC_%s 1\n", Upper(fn).c_str());
		}
	}
	std::printf("\n#endif /* KFD_SIM_BTF_H */\n");
	btf__free(amdgpu);
	btf__free(base);
	return 0;
}

int DescribeUse(const char *object_path, const char *vmlinux_path, const char *module_path,
		const char *module_base_path, bool offsets)
{
	btf *local = nullptr;
	btf *vmlinux = nullptr;
	btf *distilled = nullptr;
	btf *module = nullptr;
	local = btf__parse_elf(object_path, nullptr);
	if (libbpf_get_error(local) != 0) {
		std::fprintf(stderr, "kfd_btf: no BTF in %s\n", object_path);
		return 1;
	}
	const bool standalone =
	    module_base_path != nullptr && std::strcmp(module_base_path, "standalone") == 0;
	if (!ReadBtf(vmlinux_path, nullptr, &vmlinux) ||
	    (module_base_path != nullptr && !standalone &&
	     !ReadBtf(module_base_path, nullptr, &distilled))) {
		return 1;
	}
	// A standalone module's own types start at 1: an empty base says so to
	// ModuleType.
	if (standalone)
		distilled = btf__new_empty();
	btf *base = distilled != nullptr ? distilled : vmlinux;
	if (!ReadBtf(module_path, standalone ? nullptr : base, &module))
		return 1;
	std::set<std::string> lines;
	for (__u32 id = 1; id < btf__type_cnt(local); ++id) {
		const btf_type *t = btf__type_by_id(local, id);
		const int kind = btf_kind(t);
		if (kind != BTF_KIND_STRUCT && kind != BTF_KIND_ENUM)
			continue;
		const std::string name = Essential(Name(local, t->name_off));
		if (name.empty())
			continue;
		// Only amdkfd's types: those amdgpu defines, not vmlinux (the object's
		// own structs, map values and the like, are in neither).
		// A type the module lacks (kfd_dev___v6_1's kfd_dev on a kernel
		// without it) gives no lines: a simulator that has it where the real
		// module has not differs by those lines.
		if (btf__find_by_name_kind(vmlinux, name.c_str(), kind) > 0)
			continue;
		const int real = ModuleType(module, base, name, kind);
		if (real == 0)
			continue;
		if (kind == BTF_KIND_ENUM) {
			const btf_type *e = btf__type_by_id(module, real);
			for (int i = 0; i < btf_vlen(e); ++i) {
				lines.insert("enum " + name + " " +
					     Name(module, btf_enum(e)[i].name_off) + " = " +
					     std::to_string(btf_enum(e)[i].val));
			}
			continue;
		}
		const btf_member *m = btf_members(t);
		const btf_type *r = btf__type_by_id(module, real);
		for (int i = 0; i < btf_vlen(t); ++i) {
			const std::string field = Name(local, m[i].name_off);
			std::string what = "absent";
			const int j = MemberIndex(module, r, field);
			if (j >= 0) {
				what = Describe(module, btf_members(r)[j].type);
				if (offsets) {
					const __u32 bits = btf_member_bit_offset(r, j);
					what += " @" + std::to_string(bits / 8);
					if (bits % 8 != 0)
						what += "." + std::to_string(bits % 8);
				}
			}
			lines.insert("struct " + name + "." + field + ": " + what);
		}
	}
	for (const std::string &line : lines)
		std::printf("%s\n", line.c_str());
	btf__free(module);
	if (distilled != nullptr)
		btf__free(distilled);
	btf__free(vmlinux);
	btf__free(local);
	return 0;
}

// Gives member `field` of struct `name` in `whole` a type of another kind.
bool Retype(btf *whole, const std::string &name, const std::string &field)
{
	const int sid = btf__find_by_name_kind(whole, name.c_str(), BTF_KIND_STRUCT);
	if (sid <= 0) {
		std::fprintf(stderr, "kfd_btf: no struct %s\n", name.c_str());
		return false;
	}
	const btf_type *s = btf__type_by_id(whole, sid);
	const int index = MemberIndex(whole, s, field);
	if (index < 0) {
		std::fprintf(stderr, "kfd_btf: struct %s has no %s\n", name.c_str(), field.c_str());
		return false;
	}
	const bool was_int = btf_is_int(
	    btf__type_by_id(whole, btf__resolve_type(whole, btf_members(s)[index].type)));
	int wrong = btf__add_int(whole, "gpuq_wrong_u32", 4, 0);
	if (wrong > 0 && was_int) {
		const int n = wrong;
		wrong = btf__add_struct(whole, "gpuq_wrong", 4);
		if (wrong > 0 && btf__add_field(whole, "n", n, 0, 0) < 0)
			wrong = -1;
	}
	if (wrong <= 0) {
		std::fprintf(stderr, "kfd_btf: cannot add the wrong type\n");
		return false;
	}
	// libbpf has no call to change a member: its types are plain memory once
	// the BTF is being built (btf__add_* above), and are written out as such.
	btf_member *m = btf_members(const_cast<btf_type *>(btf__type_by_id(whole, sid)));
	m[index].type = static_cast<__u32>(wrong);
	return true;
}

int Standalone(const char *vmlinux_path, const char *amdgpu_path, const char *out_path,
	       const char *retype)
{
	const char *dot = retype != nullptr ? std::strchr(retype, '.') : nullptr;
	if (retype != nullptr && dot == nullptr) {
		std::fprintf(stderr, "kfd_btf: %s is not STRUCT.FIELD\n", retype);
		return 1;
	}
	btf *vmlinux = nullptr;
	btf *amdgpu = nullptr;
	if (!ReadBtf(vmlinux_path, nullptr, &vmlinux) || !ReadBtf(amdgpu_path, vmlinux, &amdgpu))
		return 1;
	// vmlinux's types first, keeping their ids; then amdgpu's own, which
	// btf__add_type copies with their strings but not their type ids (libbpf
	// 1.1's btf__add_btf refuses split BTF): appended in order they land on
	// the ids they have over vmlinux, so their references hold.
	btf *whole = btf__new_empty();
	bool copied =
	    btf__add_btf(whole, vmlinux) >= 0 && btf__type_cnt(whole) == btf__type_cnt(vmlinux);
	for (__u32 id = btf__type_cnt(vmlinux); copied && id < btf__type_cnt(amdgpu); ++id)
		copied = btf__add_type(whole, amdgpu, btf__type_by_id(amdgpu, id)) ==
			 static_cast<int>(id);
	int rc = 1;
	if (!copied) {
		std::fprintf(stderr, "kfd_btf: cannot copy %s over %s\n", amdgpu_path,
			     vmlinux_path);
	} else if (retype == nullptr || Retype(whole, std::string(retype, dot), dot + 1)) {
		__u32 size = 0;
		const void *raw = btf__raw_data(whole, &size);
		FILE *out = std::fopen(out_path, "wb");
		if (raw == nullptr || out == nullptr || std::fwrite(raw, 1, size, out) != size ||
		    std::fclose(out) != 0) {
			std::fprintf(stderr, "kfd_btf: cannot write %s\n", out_path);
		} else {
			rc = 0;
		}
	}
	btf__free(whole);
	btf__free(amdgpu);
	btf__free(vmlinux);
	return rc;
}

} // namespace

int main(int argc, char **argv)
{
	libbpf_set_print(nullptr);
	if (argc == 4 && std::strcmp(argv[1], "header") == 0) {
		return Header(argv[2], argv[3]);
	}
	if ((argc == 5 || argc == 6) &&
	    (std::strcmp(argv[1], "describe") == 0 || std::strcmp(argv[1], "layout") == 0)) {
		return DescribeUse(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : nullptr,
				   std::strcmp(argv[1], "layout") == 0);
	}
	if ((argc == 5 || argc == 6) && std::strcmp(argv[1], "standalone") == 0)
		return Standalone(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : nullptr);
	std::fprintf(stderr, "usage: kfd_btf header VMLINUX_BTF AMDGPU_BTF\n"
			     "       kfd_btf standalone VMLINUX_BTF AMDGPU_BTF OUT [STRUCT.FIELD]\n"
			     "       kfd_btf describe BPF_OBJECT VMLINUX_BTF MODULE_BTF "
			     "[MODULE_BASE_BTF|standalone]\n"
			     "       kfd_btf layout BPF_OBJECT VMLINUX_BTF MODULE_BTF "
			     "[MODULE_BASE_BTF|standalone]\n");
	return 2;
}
