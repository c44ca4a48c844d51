# Embeds every data/*.toml into the binary as a string table, regenerated when a
# file changes, so the knowledge base ships inside cuda-doctor.
function(cd_embed_data target dir)
  file(GLOB data_files CONFIGURE_DEPENDS ${dir}/*.toml)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/kb_embedded.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DFILES="${data_files}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${data_files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding knowledge base")
  add_library(${target} STATIC ${out})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
endfunction()
