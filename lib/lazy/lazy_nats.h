/*
 * lazy_nats.h — libnats (nats.c), loaded on first use (lazy.h).
 */
#ifndef BAKERY_LAZY_NATS_H
#define BAKERY_LAZY_NATS_H

#include <nats/nats.h>

#include "lazy.h"

#ifndef LAZY_NATS_SONAME
#define LAZY_NATS_SONAME "libnats.so.3.4"
#endif

#define LAZY_NATS_FUNCTIONS(X) X(jsConsumerConfig_Init) \
	X(jsConsumerInfo_Destroy) X(jsCtx_Destroy) X(jsDirectGetMsgOptions_Init) \
	X(jsMsgMetaData_Destroy) X(jsOptions_Init) X(jsPubAck_Destroy) \
	X(jsPubOptions_Init) X(jsStreamConfig_Init) X(jsStreamInfo_Destroy) \
	X(jsSubOptions_Init) X(js_AddConsumer) X(js_AddStream) X(js_CreateKeyValue) \
	X(natsConnection_RequestString) X(js_DirectGetMsg) X(js_GetConsumerInfo) \
	X(js_GetStreamInfo) X(js_KeyValue) X(js_PublishAsyncComplete) \
	X(js_PublishAsyncGetPendingList) X(js_PublishMsg) X(js_PublishMsgAsync) \
	X(js_PullSubscribe) X(js_PurgeStream) X(js_UpdateConsumer) \
	X(js_UpdateStream) X(kvConfig_Init) X(kvEntry_Destroy) \
	X(kvEntry_ValueString) X(kvStore_Destroy) X(kvStore_Get) \
	X(kvStore_PutString) X(natsConnection_Connect) X(natsConnection_Destroy) \
	X(natsConnection_FlushTimeout) X(natsConnection_JetStream) \
	X(natsMsgHeader_Get) X(natsMsgHeader_Set) X(natsMsgList_Destroy) \
	X(natsMsg_AckSync) X(natsMsg_Create) X(natsMsg_Destroy) X(natsMsg_GetData) \
	X(natsMsg_GetDataLength) X(natsMsg_GetMetaData) X(natsMsg_GetSubject) \
	X(natsMsg_Nak) X(natsMsg_NakWithDelay) X(natsMsg_Term) \
	X(natsOptions_Create) X(natsOptions_Destroy) X(natsOptions_SetMaxReconnect) \
	X(natsOptions_SetReconnectWait) X(natsOptions_SetServers) \
	X(natsOptions_SetTimeout) X(natsStatus_GetText) X(natsSubscription_Destroy) \
	X(natsSubscription_Fetch) X(nats_CloseAndWait) X(natsInbox_Create) X(natsInbox_Destroy) \
	X(natsConnection_SubscribeSync) X(natsConnection_PublishRequestString) \
	X(natsSubscription_NextMsg) X(natsMsg_Ack) X(nats_GetLastError) \
	X(nats_GetVersion) X(nats_Now) X(nats_Sleep) X(js_DeleteConsumer) \
	X(natsOptions_SetReconnectedCB) X(js_GetLastMsg) X(natsMsg_GetSequence) \
	X(js_Consumers) X(jsConsumerInfoList_Destroy) X(js_GetMsg) X(natsMsg_GetTime) \
	X(kvEntry_Revision) X(kvEntry_Value) X(kvEntry_ValueLen) \
	X(kvStore_CreateString) X(kvStore_UpdateString)
LAZY_NATS_FUNCTIONS(LAZY_EXTERN)
int lazy_nats(void);
/* libnats loaded, then a connection to url, nats://HOST:PORT[,...]
 * (EX_CONFIG when it names none; EX_UNAVAILABLE when none answers), with
 * the timeouts and reconnects every bakery connection has; reconnected
 * (may be NULL) is told of each reconnect. *servers: how many it names. */
int lazy_nats_connect(const char *url, natsConnectionHandler reconnected,
    void *closure, natsConnection **nc, int *servers);

#define jsConsumerConfig_Init (*lazy_jsConsumerConfig_Init)
#define jsConsumerInfo_Destroy (*lazy_jsConsumerInfo_Destroy)
#define jsCtx_Destroy (*lazy_jsCtx_Destroy)
#define jsDirectGetMsgOptions_Init (*lazy_jsDirectGetMsgOptions_Init)
#define jsMsgMetaData_Destroy (*lazy_jsMsgMetaData_Destroy)
#define jsOptions_Init (*lazy_jsOptions_Init)
#define jsPubAck_Destroy (*lazy_jsPubAck_Destroy)
#define jsPubOptions_Init (*lazy_jsPubOptions_Init)
#define jsStreamConfig_Init (*lazy_jsStreamConfig_Init)
#define jsStreamInfo_Destroy (*lazy_jsStreamInfo_Destroy)
#define jsSubOptions_Init (*lazy_jsSubOptions_Init)
#define js_AddConsumer (*lazy_js_AddConsumer)
#define js_AddStream (*lazy_js_AddStream)
#define js_CreateKeyValue (*lazy_js_CreateKeyValue)
#define natsConnection_RequestString (*lazy_natsConnection_RequestString)
#define js_DirectGetMsg (*lazy_js_DirectGetMsg)
#define js_GetConsumerInfo (*lazy_js_GetConsumerInfo)
#define js_GetStreamInfo (*lazy_js_GetStreamInfo)
#define js_KeyValue (*lazy_js_KeyValue)
#define js_PublishAsyncComplete (*lazy_js_PublishAsyncComplete)
#define js_PublishAsyncGetPendingList (*lazy_js_PublishAsyncGetPendingList)
#define js_PublishMsg (*lazy_js_PublishMsg)
#define js_PublishMsgAsync (*lazy_js_PublishMsgAsync)
#define js_PullSubscribe (*lazy_js_PullSubscribe)
#define js_PurgeStream (*lazy_js_PurgeStream)
#define js_UpdateConsumer (*lazy_js_UpdateConsumer)
#define js_UpdateStream (*lazy_js_UpdateStream)
#define kvConfig_Init (*lazy_kvConfig_Init)
#define kvEntry_Destroy (*lazy_kvEntry_Destroy)
#define kvEntry_ValueString (*lazy_kvEntry_ValueString)
#define kvStore_Destroy (*lazy_kvStore_Destroy)
#define kvStore_Get (*lazy_kvStore_Get)
#define kvStore_PutString (*lazy_kvStore_PutString)
#define natsConnection_Connect (*lazy_natsConnection_Connect)
#define natsConnection_Destroy (*lazy_natsConnection_Destroy)
#define natsConnection_FlushTimeout (*lazy_natsConnection_FlushTimeout)
#define natsConnection_JetStream (*lazy_natsConnection_JetStream)
#define natsMsgHeader_Get (*lazy_natsMsgHeader_Get)
#define natsMsgHeader_Set (*lazy_natsMsgHeader_Set)
#define natsMsgList_Destroy (*lazy_natsMsgList_Destroy)
#define natsMsg_AckSync (*lazy_natsMsg_AckSync)
#define natsMsg_Create (*lazy_natsMsg_Create)
#define natsMsg_Destroy (*lazy_natsMsg_Destroy)
#define natsMsg_GetData (*lazy_natsMsg_GetData)
#define natsMsg_GetDataLength (*lazy_natsMsg_GetDataLength)
#define natsMsg_GetMetaData (*lazy_natsMsg_GetMetaData)
#define natsMsg_GetSubject (*lazy_natsMsg_GetSubject)
#define natsMsg_Nak (*lazy_natsMsg_Nak)
#define natsMsg_NakWithDelay (*lazy_natsMsg_NakWithDelay)
#define natsMsg_Term (*lazy_natsMsg_Term)
#define natsOptions_Create (*lazy_natsOptions_Create)
#define natsOptions_Destroy (*lazy_natsOptions_Destroy)
#define natsOptions_SetMaxReconnect (*lazy_natsOptions_SetMaxReconnect)
#define natsOptions_SetReconnectWait (*lazy_natsOptions_SetReconnectWait)
#define natsOptions_SetServers (*lazy_natsOptions_SetServers)
#define natsOptions_SetTimeout (*lazy_natsOptions_SetTimeout)
#define natsStatus_GetText (*lazy_natsStatus_GetText)
#define natsSubscription_Destroy (*lazy_natsSubscription_Destroy)
#define natsSubscription_Fetch (*lazy_natsSubscription_Fetch)
#define nats_CloseAndWait (*lazy_nats_CloseAndWait)
#define natsInbox_Create (*lazy_natsInbox_Create)
#define natsInbox_Destroy (*lazy_natsInbox_Destroy)
#define natsConnection_SubscribeSync (*lazy_natsConnection_SubscribeSync)
#define natsConnection_PublishRequestString \
	(*lazy_natsConnection_PublishRequestString)
#define natsSubscription_NextMsg (*lazy_natsSubscription_NextMsg)
#define natsMsg_Ack (*lazy_natsMsg_Ack)
#define nats_GetLastError (*lazy_nats_GetLastError)
#define nats_GetVersion (*lazy_nats_GetVersion)
#define nats_Now (*lazy_nats_Now)
#define nats_Sleep (*lazy_nats_Sleep)
#define js_DeleteConsumer (*lazy_js_DeleteConsumer)
#define natsOptions_SetReconnectedCB (*lazy_natsOptions_SetReconnectedCB)
#define js_GetLastMsg (*lazy_js_GetLastMsg)
#define natsMsg_GetSequence (*lazy_natsMsg_GetSequence)
#define js_Consumers (*lazy_js_Consumers)
#define jsConsumerInfoList_Destroy (*lazy_jsConsumerInfoList_Destroy)
#define js_GetMsg (*lazy_js_GetMsg)
#define natsMsg_GetTime (*lazy_natsMsg_GetTime)
#define kvEntry_Revision (*lazy_kvEntry_Revision)
#define kvEntry_Value (*lazy_kvEntry_Value)
#define kvEntry_ValueLen (*lazy_kvEntry_ValueLen)
#define kvStore_CreateString (*lazy_kvStore_CreateString)
#define kvStore_UpdateString (*lazy_kvStore_UpdateString)

#endif
