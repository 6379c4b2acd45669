
/**
 * @brief aclnn{{name}}的第一段接口：校验参数，计算workspace大小，创建执行器。
 * @domain aclnn_ops_train
 */
ACLNN_API {{phase1}}

/**
 * @brief aclnn{{name}}的第二段接口：在stream上执行计算。
 * @param [in] workspace: 在Device侧申请的workspace内存地址。
 * @param [in] stream: acl stream流。
 * @return aclnnStatus: 返回状态码。
 */
ACLNN_API {{phase2}}
