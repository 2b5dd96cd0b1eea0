// A shared library that looks like an ibverbs library but lacks
// ibv_modify_qp, for the loader's missing-symbol test. The functions are
// never called; only their names matter.
extern "C" {
void ibv_get_device_list() {}
void ibv_free_device_list() {}
void ibv_get_device_name() {}
void ibv_open_device() {}
void ibv_close_device() {}
void ibv_query_port() {}
void ibv_query_gid() {}
void ibv_alloc_pd() {}
void ibv_dealloc_pd() {}
void ibv_reg_mr() {}
void ibv_dereg_mr() {}
void ibv_create_cq() {}
void ibv_destroy_cq() {}
void ibv_create_qp() {}
void ibv_destroy_qp() {}
void ibv_wc_status_str() {}
}
