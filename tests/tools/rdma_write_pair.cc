// rdma_write_pair DIR: a verbs program of the kind weft's users write,
// linked against libibverbs like any rdma-core program, for `weft-sim
// launch` to run as two ranks on the simulation server. Rank 0 writes 256
// bytes with an immediate into rank 1's memory region, 100 bytes in; rank 1
// checks that its receive completes as taken by that write and that the
// bytes are in its own memory. The ranks swap their queue pair number,
// GID, rkey and address through files in DIR. Exit 0 when all holds; 1
// with a line saying what did not.
#include <infiniband/verbs.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kBytes = 256;
constexpr uint32_t kOffset = 100;
constexpr uint32_t kImmediate = 0x1234;
constexpr uint8_t kGidIndex = 1;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "rdma_write_pair: %s\n", what.c_str());
  std::exit(1);
}

struct Info {
  uint32_t qp_num = 0;
  uint32_t rkey = 0;
  uint64_t address = 0;
  ibv_gid gid{};
};

uint8_t pattern(uint32_t i) { return static_cast<uint8_t>(i * 7 + 1); }

// Waits (with a deadline) for the other rank's file, written whole under
// another name and renamed into place.
Info read_info(const std::string& path) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    Info info;
    if (in.read(reinterpret_cast<char*>(&info), sizeof(info))) return info;
    if (std::chrono::steady_clock::now() > deadline) fail("no " + path);
    usleep(10'000);  // the poll interval of a wait with a deadline
  }
}

ibv_wc next_completion(ibv_cq* cq) {
  ibv_wc wc{};
  for (;;) {
    const int n = ibv_poll_cq(cq, 1, &wc);
    if (n < 0) fail("ibv_poll_cq failed");
    if (n == 1) return wc;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* rank_text = std::getenv("WEFT_SIM_RANK");
  if (argc != 2 || rank_text == nullptr) fail("usage: rdma_write_pair DIR");
  const int rank = std::atoi(rank_text);
  const std::string dir = argv[1];
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n < 1) fail("no device");
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_pd* pd = ctx != nullptr ? ibv_alloc_pd(ctx) : nullptr;
  std::vector<uint8_t> buffer(4096);
  ibv_mr* mr =
      pd != nullptr
          ? ibv_reg_mr(pd, buffer.data(), buffer.size(),
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
          : nullptr;
  ibv_cq* cq = ctx != nullptr ? ibv_create_cq(ctx, 16, nullptr, nullptr, 0)
                              : nullptr;
  if (mr == nullptr || cq == nullptr) fail("setup failed");
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.cap.max_send_wr = 4;
  init.cap.max_recv_wr = 4;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.qp_type = IBV_QPT_UC;
  ibv_qp* qp = ibv_create_qp(pd, &init);
  if (qp == nullptr) fail("ibv_create_qp failed");
  Info mine;
  mine.qp_num = qp->qp_num;
  mine.rkey = mr->rkey;
  mine.address = reinterpret_cast<uintptr_t>(buffer.data());
  if (ibv_query_gid(ctx, 1, kGidIndex, &mine.gid) != 0) fail("no GID");
  ibv_qp_attr init_attr{};
  init_attr.qp_state = IBV_QPS_INIT;
  init_attr.port_num = 1;
  init_attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (ibv_modify_qp(qp, &init_attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                                        IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) !=
      0) {
    fail("INIT failed");
  }
  if (rank == 1) {
    // The receive the write with immediate takes (no entries), posted
    // before the writer can learn where to write.
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = 7;
    if (ibv_post_recv(qp, &wr, &bad) != 0) fail("ibv_post_recv failed");
  }
  const std::string me = dir + "/rank" + std::to_string(rank);
  {
    std::ofstream out(me + ".tmp", std::ios::binary);
    out.write(reinterpret_cast<const char*>(&mine), sizeof(mine));
  }
  if (std::rename((me + ".tmp").c_str(), me.c_str()) != 0) fail("rename");
  const Info peer = read_info(dir + "/rank" + std::to_string(1 - rank));
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  attr.dest_qp_num = peer.qp_num;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.port_num = 1;
  attr.ah_attr.grh.hop_limit = 1;
  attr.ah_attr.grh.dgid = peer.gid;
  attr.ah_attr.grh.sgid_index = kGidIndex;
  if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN) != 0) {
    fail("RTR failed");
  }
  attr.qp_state = IBV_QPS_RTS;
  if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) {
    fail("RTS failed");
  }
  if (rank == 0) {
    for (uint32_t i = 0; i < kBytes; ++i) buffer[i] = pattern(i);
    ibv_sge sge{reinterpret_cast<uintptr_t>(buffer.data()), kBytes, mr->lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htobe32(kImmediate);
    wr.wr.rdma.remote_addr = peer.address + kOffset;
    wr.wr.rdma.rkey = peer.rkey;
    if (ibv_post_send(qp, &wr, &bad) != 0) fail("ibv_post_send failed");
    const ibv_wc wc = next_completion(cq);
    if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RDMA_WRITE) {
      fail("the write did not complete as an RDMA WRITE");
    }
    std::printf("writer: RDMA WRITE of %u bytes completed\n", kBytes);
    return 0;
  }
  const ibv_wc wc = next_completion(cq);
  if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
      (wc.wc_flags & IBV_WC_WITH_IMM) == 0 ||
      be32toh(wc.imm_data) != kImmediate || wc.byte_len != kBytes) {
    fail("the receive did not complete as taken by the write");
  }
  for (uint32_t i = 0; i < kBytes; ++i) {
    if (buffer[kOffset + i] != pattern(i)) {
      fail("byte " + std::to_string(i) + " of the write is not in memory");
    }
  }
  if (buffer[kOffset - 1] != 0 || buffer[kOffset + kBytes] != 0) {
    fail("the write touched bytes around it");
  }
  std::printf("target: %u bytes landed at offset %u, immediate 0x%x\n",
              kBytes, kOffset, kImmediate);
  return 0;
}
