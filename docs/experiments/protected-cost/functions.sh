#!/bin/bash
# functions.sh N FILE...: per transaction (N), the inclusive instructions of chosen functions in
# each FILE, made by: callgrind_annotate --inclusive=yes --threshold=100 OUT | grep -E "^ *[0-9,]+ \(" |
#   sed -E "s/^ *([0-9,]+) \( *[0-9.]+%\) +/\1\t/; s/,//g" > FILE
n=$1; shift
for fn in BeginInternalSubTransaction ReleaseCurrentSubTransaction to_jsonb sha256_bytea pg_proc_aclcheck ExecInitExprWithParams SPI_execute_plan_with_paramlist ExecBRUpdateTriggersNew ExecBRInsertTriggers ExecASInsertTriggers ExecBSUpdateTriggers ExecBSInsertTriggers set_config_by_name currval_oid setval_oid fmgr_security_definer plpgsql_exec_trigger plpgsql_exec_function GetCachedPlan OverrideSearchPathMatchesCurrent fmgr_info ProcessGUCArray AtEOXact_GUC NewGUCNestLevel pg_current_xact_id current_setting acldefault ExecutorStart PortalRun heap_page_prune_opt PostgresMain; do
  printf '%-34s' $fn; for f in "$@"; do v=$(grep -F "	???:$fn [" $f | head -1 | cut -f1); printf '%10s' $(( ${v:-0} / n )); done; echo; done
